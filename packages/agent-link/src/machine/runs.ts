/**
 * Builds and investigations on a machine (chopin.machine.v1): the offer a person's start becomes, the
 * claim, the run credential, status and log events, and a person's stop, resume or discard. The
 * prose is docs/machines.md § Runs; both ends validate every message against these schemas.
 */
import { z } from "zod";
import { chars, count, idString } from "../schemas/fields";
import { MACHINE_RUN_STATUSES } from "./report";

export { MACHINE_RUN_STATUSES };

const note = chars(0, 4000);
const repository = z.string().regex(/^[A-Za-z0-9-]{1,39}\/[A-Za-z0-9._-]{1,100}$/, "must be owner/name");

/** A build implements the document's plan (it may push and open a pull request); an investigation only reads. */
export const RUN_KINDS = ["build", "investigation"] as const;
export const runKindSchema = z.enum(RUN_KINDS);
export type RunKind = z.infer<typeof runKindSchema>;

/** run_ then 16 base32 letters, as the server makes them. */
export const RUN_ID_PATTERN = /^run_[a-z2-7]{16}$/;
export const runIdSchema = z.string().regex(RUN_ID_PATTERN, "must be a run id");

/** chopin_r_ then 43 base64url characters: a run's own credential for /mcp. */
export const RUN_CREDENTIAL_PATTERN = /^chopin_r_[A-Za-z0-9_-]{43}$/;

/** A full commit id: SHA-1 (40 hex) or SHA-256 (64 hex), lower case. The machine checks it out exactly. */
export const commitSchema = z.string().regex(/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/, "must be a full commit id");

/** A person's brief: what to build or what to find out. */
export const BRIEF_MAX = 16_000;
export const briefSchema = chars(1, BRIEF_MAX);

export const runOfferSchema = z.strictObject({
	id: runIdSchema,
	kind: runKindSchema,
	document: z.strictObject({ id: idString, url: chars(1, 2048), title: note, repository }),
	base: commitSchema,
	brief: briefSchema,
	/** Who started it; the build's agent names them in its pull request. */
	requestedBy: chars(1, 39),
	createdAt: count,
});
export type RunOffer = z.infer<typeof runOfferSchema>;

export const machineRunStatusSchema = z.enum(MACHINE_RUN_STATUSES);
export type MachineRunStatus = z.infer<typeof machineRunStatusSchema>;
export const FINAL_MACHINE_RUN_STATUSES: ReadonlySet<MachineRunStatus> = new Set([
	"finished",
	"failed",
	"stopped",
]);

/** Where a run works: its own workspace (its own git directory) and the branch it starts on. */
export const runWorkspaceSchema = z.strictObject({ path: chars(1, 4096), branch: chars(1, 256) });
export type RunWorkspace = z.infer<typeof runWorkspaceSchema>;

export const RUN_LOG_KINDS = ["message", "thought", "tool", "plan", "output", "permission", "note"] as const;
export const runLogEntrySchema = z.strictObject({
	at: count,
	kind: z.enum(RUN_LOG_KINDS),
	text: note,
});
export type RunLogEntry = z.infer<typeof runLogEntrySchema>;
/** Log entries in one run-log message. */
export const RUN_LOG_BATCH_MAX = 200;

export const RUN_ACTIONS = ["stop", "resume", "discard"] as const;
export const runActionSchema = z.enum(RUN_ACTIONS);
export type RunAction = z.infer<typeof runActionSchema>;

/** Why the server would not hand a machine a run it claimed. */
export const RUN_REFUSAL_CODES = ["run-taken", "run-withdrawn", "run-not-found"] as const;

/** Whether this machine can run builds at all (an ACP command is configured), for the server to say so at start. */
export const runnerReportSchema = z.strictObject({ available: z.boolean(), reason: note.optional() });
export type RunnerReport = z.infer<typeof runnerReportSchema>;

/** Messages a machine sends about its runs. */
export const runClientMessages = [
	/** Takes an offer; the server answers run-claimed once, or run-refused. */
	z.strictObject({ type: z.literal("run-claim"), run: runIdSchema }),
	z.strictObject({
		type: z.literal("run-status"),
		run: runIdSchema,
		status: machineRunStatusSchema,
		reason: note.optional(),
		workspace: runWorkspaceSchema.optional(),
	}),
	z.strictObject({
		type: z.literal("run-log"),
		run: runIdSchema,
		entries: z.array(runLogEntrySchema).min(1).max(RUN_LOG_BATCH_MAX),
	}),
	z.strictObject({
		type: z.literal("run-control-result"),
		request: idString,
		ok: z.boolean(),
		message: note.optional(),
	}),
] as const;

/** Messages the server sends a machine about runs. */
export const runServerMessages = [
	z.strictObject({ type: z.literal("run-offer"), run: runOfferSchema }),
	z.strictObject({
		type: z.literal("run-claimed"),
		run: runIdSchema,
		token: z.string().regex(RUN_CREDENTIAL_PATTERN),
	}),
	z.strictObject({
		type: z.literal("run-refused"),
		run: runIdSchema,
		code: z.enum(RUN_REFUSAL_CODES),
		message: note,
	}),
	/** The offer went away before the machine claimed it (a person stopped or discarded it). */
	z.strictObject({ type: z.literal("run-withdrawn"), run: runIdSchema }),
	z.strictObject({
		type: z.literal("run-control"),
		request: idString,
		run: runIdSchema,
		action: runActionSchema,
	}),
] as const;
