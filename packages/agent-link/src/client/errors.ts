/**
 * What connecting and using a link can fail with: an upgrade the server refused over HTTP, a
 * refused message, and the client's own errors, each with a stable code, one sentence and a hint.
 * None of them ever holds the bearer token.
 */
import { REFUSALS, type RefusalCode } from "../closing";
import type { Refused as RefusedMessage } from "../schemas/handshake";
import type { LinkClosed } from "./link-closed";

/** The upgrade was answered with an HTTP status instead of 101; code is the JSON body's, when readable. */
export class UpgradeRefused extends Error {
	override readonly name = "UpgradeRefused";
	readonly hint: string;
	constructor(
		readonly status: number,
		readonly code?: string,
	) {
		super(`The server refused the agent connection with HTTP ${status}.`);
		this.hint = UPGRADE_HINTS[status] ?? "Check the server's URL and logs.";
	}
}

const UPGRADE_HINTS: Record<number, string> = {
	401: "Check the bearer token; a Planner credential lasts 15 minutes, so read CHOPIN_PLANNER_TOKEN_FILE again before retrying.",
	403: "The account fails the server's instance admission (or the request carried a foreign Origin).",
	404: "The server does not run HARNESS=remote with AGENT on, or the URL is not a Chopin origin.",
	426: "The server does not accept chopin.agent.v1; upgrade this client.",
	500: "The server could not admit the account; retry on a backoff.",
	503: "GitHub is unavailable or rate limiting; retry on a backoff.",
};

/** The server answered attach or resume with refused. Only retry: true (unavailable) is worth retrying. */
export class Refused extends Error {
	override readonly name = "Refused";
	readonly code: RefusalCode;
	readonly retry: boolean;
	readonly hint: string;
	constructor(message: RefusedMessage) {
		super(message.message);
		this.code = message.code;
		this.retry = message.retry === true;
		this.hint = this.retry
			? "Chopin could not decide; retry the same resume on a backoff."
			: REFUSALS[message.code].meaning;
	}
}

export const LINK_ERROR_CODES = [
	"invalid-options",
	"insecure-url",
	"connect-failed",
	"closed-during-handshake",
	"subprotocol-missing",
	"server-error",
	"malformed-message",
	"resume-unavailable",
	"aborted",
	"feature-not-granted",
	"link-closed",
	"session-ended",
	"turn-ended",
	"tool-call-id-repeated",
	"tool-not-called",
	"tool-name-taken",
] as const;
export type LinkErrorCode = (typeof LINK_ERROR_CODES)[number];

/** The client's own errors. closed says how the socket ended when the error came from a close. */
export class LinkError extends Error {
	override readonly name = "LinkError";
	constructor(
		readonly code: LinkErrorCode,
		message: string,
		readonly hint?: string,
		readonly closed?: LinkClosed,
	) {
		super(message);
	}
}

/**
 * Whether connecting again (with the same resume) may succeed: a refused with retry, a 5xx at
 * the upgrade, and a socket that failed or closed before the link was ready. Everything else is
 * a decision about this account or document, or a bug, and retrying changes nothing.
 */
export function isRetryable(error: unknown): boolean {
	if (error instanceof Refused) return error.retry;
	if (error instanceof UpgradeRefused) return error.status >= 500;
	if (error instanceof LinkError)
		return error.code === "connect-failed" || error.code === "closed-during-handshake";
	return false;
}
