/**
 * How a connection is refused or ends, as data: the upgrade's HTTP statuses, the refusal codes
 * with their close codes, the error codes, and every close code with its meaning.
 */
import { z } from "zod";
import { SUPPORTED_SUBPROTOCOLS } from "./protocol";

/** refused.code values (spec: Ownership). */
export const REFUSAL_CODES = [
	"unsupported-version",
	"repository-forbidden",
	"sign-in-required",
	"planner-attached",
	"document-unavailable",
	"document-archived",
	"access-revoked",
	"unavailable",
] as const;
export const refusalCodeSchema = z.enum(REFUSAL_CODES);
export type RefusalCode = z.infer<typeof refusalCodeSchema>;

/** Each refusal with the close code that follows it and whether the client should retry. */
export const REFUSALS: Readonly<Record<RefusalCode, { close: number; retry: boolean; meaning: string }>> = {
	"unsupported-version": { close: 4426, retry: false, meaning: "The server speaks another version." },
	"repository-forbidden": {
		close: 4403,
		retry: false,
		meaning: "The account cannot push to or administer the document's repository.",
	},
	"sign-in-required": {
		close: 4401,
		retry: false,
		meaning: "The account has no live Chopin browser sign-in, or it ended.",
	},
	"planner-attached": {
		close: 4409,
		retry: false,
		meaning: "Another client holds the document's Planner; the message names its login.",
	},
	"document-unavailable": {
		close: 4404,
		retry: false,
		meaning: "No document matches, or it is being deleted.",
	},
	"document-archived": { close: 4404, retry: false, meaning: "The document is archived." },
	"access-revoked": {
		close: 4403,
		retry: false,
		meaning: "Access or the Planner ownership was lost after attaching.",
	},
	unavailable: {
		close: 1011,
		retry: true,
		meaning: "The server could not check the document or the account; the refusal carries retry: true.",
	},
};

/** The close code that follows refused with this code. */
export function closeCodeForRefusal(code: RefusalCode): number {
	return REFUSALS[code].close;
}

/** error.code values the server sends before closing for a protocol violation (spec: Closing). */
export const ERROR_CODES = ["malformed-message", "protocol", "message-too-large"] as const;
export const errorCodeSchema = z.enum(ERROR_CODES);
export type ErrorCode = z.infer<typeof errorCodeSchema>;

export const ERRORS: Readonly<Record<ErrorCode, { close: number; meaning: string }>> = {
	"malformed-message": { close: 1008, meaning: "Unparseable or invalid message." },
	protocol: {
		close: 1008,
		meaning:
			"Out-of-order message: before attach is answered, a second attach, or a repeated input-request id.",
	},
	"message-too-large": { close: 1009, meaning: "A frame over 2 MiB." },
};

export function closeCodeForError(code: ErrorCode): number {
	return ERRORS[code].close;
}

/** Every close code of the spec's Closing table, plus the client's own 4400. */
export const CLOSE_CODES = {
	detached: 1000,
	unresponsive: 1001,
	policy: 1008,
	tooLarge: 1009,
	unavailable: 1011,
	restarting: 1012,
	clientMalformed: 4400,
	signInRequired: 4401,
	forbidden: 4403,
	documentUnavailable: 4404,
	plannerAttached: 4409,
	unsupportedVersion: 4426,
} as const;
export type CloseCode = (typeof CLOSE_CODES)[keyof typeof CLOSE_CODES];

export const CLOSES: Readonly<Record<CloseCode, { sentAfter: string; meaning: string }>> = {
	1000: { sentAfter: "detach", meaning: "The client detached." },
	1001: { sentAfter: "nothing", meaning: "No pong or message within the timeout (reason unresponsive)." },
	1008: {
		sentAfter: "error with malformed-message or protocol",
		meaning: "Unparseable, invalid, or out-of-order message.",
	},
	1009: { sentAfter: "error with message-too-large", meaning: "A frame over 2 MiB." },
	1011: { sentAfter: "refused with unavailable", meaning: "The server could not check the document." },
	1012: { sentAfter: "restarting, with restart-notice", meaning: "The server is restarting." },
	4400: {
		sentAfter: "nothing (sent by the client)",
		meaning: "The client received a frame it cannot parse (reason malformed-message).",
	},
	4401: { sentAfter: "refused sign-in-required", meaning: "The account has no live browser sign-in." },
	4403: {
		sentAfter: "refused repository-forbidden or access-revoked",
		meaning: "The account may not hold, or lost, the document's Planner.",
	},
	4404: {
		sentAfter: "refused document-unavailable or document-archived",
		meaning: "The document cannot be attached.",
	},
	4409: { sentAfter: "refused planner-attached", meaning: "Another client holds the document's Planner." },
	4426: { sentAfter: "refused unsupported-version", meaning: "The server speaks another version." },
};

/** The reason of the server's 1001 close. */
export const UNRESPONSIVE_REASON = "unresponsive";
/** What a client closes with when it cannot parse a frame: Node's WebSocket cannot send 1008. */
export const CLIENT_MALFORMED_CLOSE = { code: 4400, reason: "malformed-message" } as const;

/** HTTP statuses of a refused upgrade, in the order the server checks them (spec: Endpoint). */
export const UPGRADE_REFUSALS = [
	{ status: 404, reason: "not-enabled", meaning: "The server does not run HARNESS=remote with AGENT on." },
	{ status: 426, reason: "subprotocol-required", meaning: "The request does not offer chopin.agent.v1." },
	{ status: 403, reason: "foreign-origin", meaning: "A foreign Origin." },
	{
		status: 401,
		reason: "unauthorized",
		meaning:
			"Missing or malformed bearer, GitHub rejected the token, or an unknown or expired Planner credential, or its machine is revoked.",
	},
	{ status: 403, reason: "admission-refused", meaning: "The account fails instance admission." },
	{
		status: 503,
		reason: "github-unavailable",
		meaning: "GitHub is unavailable or rate limiting; retry later.",
	},
	{ status: 500, reason: "admission-failed", meaning: "Any other admission failure." },
] as const;
export type UpgradeRefusal = (typeof UPGRADE_REFUSALS)[number];

/** The JSON body of a 426: the subprotocols the server speaks. */
export const subprotocolRequiredBodySchema = z.strictObject({
	code: z.literal("subprotocol-required"),
	supported: z.array(z.string().min(1)).min(1),
});
export type SubprotocolRequiredBody = z.infer<typeof subprotocolRequiredBodySchema>;

export function subprotocolRequiredBody(): SubprotocolRequiredBody {
	return { code: "subprotocol-required", supported: [...SUPPORTED_SUBPROTOCOLS] };
}
