/**
 * The zod schemas of chopin.machine.v1: the pairing and machine HTTP bodies and the control
 * channel's messages in both directions. Types are z.infer of these, never twins.
 */
import { z } from "zod";
import { chars, count, idString } from "../schemas/fields";
import { clientInfoSchema, machineRefusalCodeSchema } from "./protocol";
import { plannerStateSchema, runStateSchema, sandboxReportSchema } from "./report";
import { runClientMessages, runnerReportSchema, runServerMessages } from "./runs";

const repository = z.string().regex(/^[A-Za-z0-9-]{1,39}\/[A-Za-z0-9._-]{1,100}$/, "must be owner/name");
const label = chars(1, 128);
const note = chars(0, 4000);
const millis = count;

/** A checkout as the machine describes it. */
export const checkoutSchema = z.strictObject({
	path: chars(1, 4096),
	repository,
	origin: chars(0, 2048).optional(),
	branch: chars(0, 256).optional(),
	head: chars(0, 128).optional(),
});
export type Checkout = z.infer<typeof checkoutSchema>;

/**
 * A refusal's body. Not strict: every server error shares this shape and some add a field (a 400's
 * `field`, a 426's `supported`), so a client reads what it knows and ignores the rest.
 */
export const errorBodySchema = z.object({
	code: z.string().min(1).max(128),
	message: note,
	hint: note.optional(),
	/** Seconds to wait, on a 429 or 503 (the same as its Retry-After header). */
	retryAfter: count.optional(),
	/** The subprotocols the server speaks, on a 426 subprotocol-required. */
	supported: z.array(z.string()).optional(),
});
export type ErrorBody = z.infer<typeof errorBodySchema>;

// Pairing ------------------------------------------------------------------------------------

export const pairingStartSchema = z.strictObject({
	label,
	checkouts: z.array(checkoutSchema).min(1).max(32),
	client: clientInfoSchema,
});
export type PairingStart = z.infer<typeof pairingStartSchema>;

export const pairingCodeSchema = z.string().regex(/^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$/);

export const pairingStartedSchema = z.strictObject({
	id: idString,
	secret: z.string().min(32).max(128),
	code: pairingCodeSchema,
	link: z.url(),
	expiresAt: millis,
	pollMs: count,
});
export type PairingStarted = z.infer<typeof pairingStartedSchema>;

export const pairingClaimSchema = z.strictObject({ secret: z.string().min(1).max(128) });

export const machineSummarySchema = z.strictObject({ id: idString, label, owner: chars(1, 39) });
export type MachineSummary = z.infer<typeof machineSummarySchema>;

export const pairingClaimedSchema = z.discriminatedUnion("status", [
	z.strictObject({ status: z.literal("pending"), expiresAt: millis }),
	z.strictObject({
		status: z.literal("claimed"),
		credential: z.string().regex(/^chopin_m_[A-Za-z0-9_-]{43}$/),
		machine: machineSummarySchema,
	}),
]);
export type PairingClaimed = z.infer<typeof pairingClaimedSchema>;

export const pairingConfirmSchema = z.strictObject({ code: pairingCodeSchema, autoRun: z.boolean() });

/**
 * The confirm's answer: the machine (local mode), or where to send the browser for the machine's
 * own GitHub grant (GitHub mode), after which GitHub brings it back to the pairing's page confirmed.
 */
export const pairingConfirmedSchema = z.discriminatedUnion("status", [
	z.strictObject({
		status: z.literal("confirmed"),
		machine: machineSummarySchema.extend({ autoRun: z.boolean() }),
	}),
	z.strictObject({ status: z.literal("authorize"), location: chars(1, 4096) }),
]);
export type PairingConfirmed = z.infer<typeof pairingConfirmedSchema>;

// The machine's own HTTP API -------------------------------------------------------------------

export const machineInfoSchema = z.strictObject({
	machine: machineSummarySchema.extend({
		autoRun: z.boolean(),
		repositories: z.array(repository),
		createdAt: millis,
	}),
});
export type MachineInfo = z.infer<typeof machineInfoSchema>;

export const plannerCredentialRequestSchema = z.strictObject({ document: chars(1, 2048) });
export const plannerCredentialSchema = z.strictObject({
	token: z.string().regex(/^chopin_p_[A-Za-z0-9_-]{43}$/),
	expiresAt: millis,
	document: z.strictObject({ id: idString, url: chars(1, 2048) }),
});
export type PlannerCredential = z.infer<typeof plannerCredentialSchema>;

export const githubTokenSchema = z.strictObject({ token: z.string().min(1), expiresAt: millis });
export type GitHubToken = z.infer<typeof githubTokenSchema>;

// The control channel --------------------------------------------------------------------------

const machineState = {
	checkouts: z.array(checkoutSchema).max(256),
	runs: z.array(runStateSchema).max(256),
	planners: z.array(plannerStateSchema).max(256),
	sandbox: sandboxReportSchema,
	/** Whether it can run builds (an ACP command is configured); absent from a CLI from before builds. */
	runner: runnerReportSchema.optional(),
};

export const machineClientMessageSchema = z.discriminatedUnion("type", [
	z.strictObject({ type: z.literal("hello"), version: z.int().positive(), ...machineState }),
	z.strictObject({ type: z.literal("report"), ...machineState }),
	z.strictObject({
		type: z.literal("planner-event"),
		document: idString,
		event: z.enum(["starting", "started", "exited", "stopped", "refused"]),
		reason: note.optional(),
	}),
	...runClientMessages,
]);
export type MachineClientMessage = z.infer<typeof machineClientMessageSchema>;

export const assignmentSchema = z.strictObject({
	document: z.strictObject({ id: idString, url: chars(1, 2048), title: note, repository }),
});
export type Assignment = z.infer<typeof assignmentSchema>;

export const checkoutAccessSchema = z.strictObject({
	repository,
	access: z.enum(["ok", "forbidden", "unknown"]),
});

export const machineServerMessageSchema = z.discriminatedUnion("type", [
	z.strictObject({
		type: z.literal("welcome"),
		machine: machineSummarySchema.extend({ autoRun: z.boolean() }),
		repositories: z.array(checkoutAccessSchema).max(256),
		planners: z.array(assignmentSchema).max(256),
	}),
	z.strictObject({ type: z.literal("planners"), planners: z.array(assignmentSchema).max(256) }),
	z.strictObject({ type: z.literal("restarting"), reconnectWithinMs: count }),
	z.strictObject({ type: z.literal("revoked"), code: machineRefusalCodeSchema, message: note }),
	z.strictObject({
		type: z.literal("error"),
		code: z.enum(["malformed-message", "message-too-large"]),
		message: note,
	}),
	...runServerMessages,
]);
export type MachineServerMessage = z.infer<typeof machineServerMessageSchema>;
