// The builds table: a run (build or investigation) as code sees it, and the queries that read and write its row
// on both databases. Every write that changes a status is one conditional UPDATE, so a claim or an end happens once.
import { runActionSchema, runKindSchema, runWorkspaceSchema } from "@chopin/agent-link/machine";
import { STAGE_REPORT_STATUSES } from "@chopin/agent-link/mcp";
import { z } from "zod";
import { dbJson } from "../store/codecs";
import type { Db } from "../store/store";
import { BUILD_STATUSES, type BuildStatus, LIVE_BUILD_STATUSES } from "./statuses";

export const stageSchema = z.strictObject({
	name: z.string(),
	status: z.enum(STAGE_REPORT_STATUSES),
	detail: z.string().optional(),
	at: z.number(),
});
export type Stage = z.infer<typeof stageSchema>;

export const blockerSchema = z.strictObject({ message: z.string(), at: z.number() });
export type Blocker = z.infer<typeof blockerSchema>;

export const pullRequestSchema = z.strictObject({
	url: z.string(),
	title: z.string().optional(),
	at: z.number(),
});
export type PullRequest = z.infer<typeof pullRequestSchema>;

export const resultSchema = z.strictObject({
	outcome: z.enum(["succeeded", "failed"]),
	summary: z.string(),
	branch: z.string().optional(),
	commit: z.string().optional(),
	at: z.number(),
});
export type BuildResult = z.infer<typeof resultSchema>;

/**
 * A person's stop, resume or discard as the card shows it: `held` until an away machine is back, `sent`
 * and waiting for the machine's answer, then `confirmed` or `refused`; `unconfirmed` once 10 s passed
 * without one (a late answer still settles it).
 */
export const CONTROL_STATES = ["held", "sent", "confirmed", "refused", "unconfirmed"] as const;
export const controlSchema = z.strictObject({
	action: runActionSchema,
	by: z.string(),
	at: z.number(),
	state: z.enum(CONTROL_STATES),
	/** The machine's sentence, with a refusal. */
	message: z.string().optional(),
});
export type Control = z.infer<typeof controlSchema>;

const buildRowSchema = z.object({
	id: z.string(),
	document_id: z.string(),
	kind: runKindSchema,
	brief: z.string(),
	base: z.string(),
	requested_by: z.string(),
	machine_id: z.string(),
	idempotency_key: z.string().nullable(),
	status: z.enum(BUILD_STATUSES),
	reason: z.string().nullable(),
	stages: dbJson(z.array(stageSchema)),
	blocker: dbJson(blockerSchema).nullable(),
	pull_requests: dbJson(z.array(pullRequestSchema)),
	result: dbJson(resultSchema).nullable(),
	workspace: dbJson(runWorkspaceSchema).nullable(),
	held_action: z.enum(["stop", "discard"]).nullable(),
	control_request: z.string().nullable(),
	control: dbJson(controlSchema).nullable(),
	credential_digest: z.string().nullable(),
	credential_until: z.number().nullable(),
	log_seq: z.number(),
	created_at: z.number(),
	updated_at: z.number(),
	claimed_at: z.number().nullable(),
	ended_at: z.number().nullable(),
	discarded_at: z.number().nullable(),
});
type BuildRow = z.infer<typeof buildRowSchema>;

/** A run as the server keeps it. */
export interface Build {
	id: string;
	documentId: string;
	kind: z.infer<typeof runKindSchema>;
	brief: string;
	base: string;
	requestedBy: string;
	machineId: string;
	idempotencyKey: string | null;
	status: BuildStatus;
	/** The machine's reason for its last status, or the server's when it ended the run itself. */
	reason: string | null;
	stages: Stage[];
	blocker: Blocker | null;
	pullRequests: PullRequest[];
	result: BuildResult | null;
	workspace: z.infer<typeof runWorkspaceSchema> | null;
	/** A stop or discard held until the away machine is back. */
	held: "stop" | "discard" | null;
	/** The run-control the machine has yet to answer. */
	controlRequest: string | null;
	control: Control | null;
	credentialDigest: string | null;
	/** When the credential stops working; null while the run is live (and before it is claimed). */
	credentialUntil: number | null;
	/** The number of the last log line given. */
	logSeq: number;
	createdAt: number;
	updatedAt: number;
	claimedAt: number | null;
	endedAt: number | null;
	discardedAt: number | null;
}

function toBuild(row: BuildRow): Build {
	return {
		id: row.id,
		documentId: row.document_id,
		kind: row.kind,
		brief: row.brief,
		base: row.base,
		requestedBy: row.requested_by,
		machineId: row.machine_id,
		idempotencyKey: row.idempotency_key,
		status: row.status,
		reason: row.reason,
		stages: row.stages,
		blocker: row.blocker,
		pullRequests: row.pull_requests,
		result: row.result,
		workspace: row.workspace,
		held: row.held_action,
		controlRequest: row.control_request,
		control: row.control,
		credentialDigest: row.credential_digest,
		credentialUntil: row.credential_until,
		logSeq: row.log_seq,
		createdAt: row.created_at,
		updatedAt: row.updated_at,
		claimedAt: row.claimed_at,
		endedAt: row.ended_at,
		discardedAt: row.discarded_at,
	};
}

export interface NewBuild {
	id: string;
	documentId: string;
	kind: Build["kind"];
	brief: string;
	base: string;
	requestedBy: string;
	machineId: string;
	idempotencyKey: string | null;
	liveKey: string;
	now: number;
}

/** Inserts an offered run; throws a unique violation when its key or live key is taken (a duplicate start). */
export async function insertBuild(db: Db, b: NewBuild): Promise<void> {
	await db.sql`INSERT INTO builds ${db.sql({
		id: b.id,
		document_id: b.documentId,
		kind: b.kind,
		brief: b.brief,
		base: b.base,
		requested_by: b.requestedBy,
		machine_id: b.machineId,
		idempotency_key: b.idempotencyKey,
		live_key: b.liveKey,
		status: "offered",
		stages: "[]",
		pull_requests: "[]",
		log_seq: 0,
		created_at: b.now,
		updated_at: b.now,
	})}`;
}

export async function getBuild(db: Db, id: string): Promise<Build | undefined> {
	const row = await db.one(db.sql`SELECT * FROM builds WHERE id = ${id}`, buildRowSchema);
	return row && toBuild(row);
}

export async function findByKey(db: Db, documentId: string, key: string): Promise<Build | undefined> {
	const row = await db.one(
		db.sql`SELECT * FROM builds WHERE document_id = ${documentId} AND idempotency_key = ${key}`,
		buildRowSchema,
	);
	return row && toBuild(row);
}

export async function findByLiveKey(db: Db, liveKey: string): Promise<Build | undefined> {
	const row = await db.one(db.sql`SELECT * FROM builds WHERE live_key = ${liveKey}`, buildRowSchema);
	return row && toBuild(row);
}

export async function findByCredential(db: Db, digest: string): Promise<Build | undefined> {
	const row = await db.one(db.sql`SELECT * FROM builds WHERE credential_digest = ${digest}`, buildRowSchema);
	return row && toBuild(row);
}

export async function findByControlRequest(db: Db, request: string): Promise<Build | undefined> {
	const row = await db.one(db.sql`SELECT * FROM builds WHERE control_request = ${request}`, buildRowSchema);
	return row && toBuild(row);
}

/** A document's runs not discarded, newest first (what its page lists). */
export async function listForDocument(db: Db, documentId: string, limit = 100): Promise<Build[]> {
	const rows = await db.many(
		db.sql`SELECT * FROM builds WHERE document_id = ${documentId} AND discarded_at IS NULL
			ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
		buildRowSchema,
	);
	return rows.map(toBuild);
}

/** A machine's runs that are not final (discarded ones included: the machine may still hold them). */
export async function liveForMachine(db: Db, machineId: string): Promise<Build[]> {
	const rows = await db.many(
		db.sql`SELECT * FROM builds WHERE machine_id = ${machineId} AND status IN ${db.sql([...LIVE_BUILD_STATUSES])}
			ORDER BY created_at, id`,
		buildRowSchema,
	);
	return rows.map(toBuild);
}

/** A machine's runs with a held stop or discard, or a control sent and not answered yet. */
export async function heldForMachine(db: Db, machineId: string): Promise<Build[]> {
	const rows = await db.many(
		db.sql`SELECT * FROM builds WHERE machine_id = ${machineId}
			AND (held_action IS NOT NULL OR control_request IS NOT NULL) ORDER BY created_at, id`,
		buildRowSchema,
	);
	return rows.map(toBuild);
}

/** Every run not final, for the timers a start-up arms (machines are all away then). */
export async function allLive(db: Db): Promise<Build[]> {
	const rows = await db.many(
		db.sql`SELECT * FROM builds WHERE status IN ${db.sql([...LIVE_BUILD_STATUSES])}`,
		buildRowSchema,
	);
	return rows.map(toBuild);
}

/** Whether the document has a run that is not final and not discarded: it is busy. */
export async function hasLive(db: Db, documentId: string): Promise<boolean> {
	const row = await db.one(
		db.sql`SELECT count(*) AS n FROM builds WHERE document_id = ${documentId} AND discarded_at IS NULL
			AND status IN ${db.sql([...LIVE_BUILD_STATUSES])}`,
		z.object({ n: z.coerce.number() }),
	);
	return (row?.n ?? 0) > 0;
}

/** The offer claimed: preparing, with the credential's digest. True when this call claimed it (once). */
export async function claimBuild(
	db: Db,
	id: string,
	machineId: string,
	digest: string,
	now: number,
): Promise<boolean> {
	const rows = await db.many(
		db.sql`UPDATE builds SET status = 'preparing', credential_digest = ${digest}, claimed_at = ${now}, updated_at = ${now}
			WHERE id = ${id} AND machine_id = ${machineId} AND status = 'offered' AND discarded_at IS NULL
			RETURNING id`,
	);
	return rows.length === 1;
}

/** A live status (preparing, running, paused) as the machine reports it; only while the run is claimed and live. */
export async function setLiveStatus(
	db: Db,
	id: string,
	fields: { status: BuildStatus; reason?: string; workspace?: Build["workspace"]; now: number },
): Promise<boolean> {
	const workspace = fields.workspace ? JSON.stringify(fields.workspace) : null;
	const rows = await db.many(
		db.sql`UPDATE builds SET status = ${fields.status}, reason = ${fields.reason ?? null},
			workspace = COALESCE(${workspace}, workspace), updated_at = ${fields.now}
			WHERE id = ${id} AND status IN ('preparing', 'running', 'paused') RETURNING id`,
	);
	return rows.length === 1;
}

/**
 * Ends a run that is not final, once: its status, the reason, no live key any more (a duplicate start
 * makes a new run now), nothing held, and the credential good until `credentialUntil`.
 */
export async function endBuild(
	db: Db,
	id: string,
	fields: {
		status: BuildStatus;
		reason?: string | null;
		workspace?: Build["workspace"];
		credentialUntil: number;
		now: number;
	},
): Promise<boolean> {
	const workspace = fields.workspace ? JSON.stringify(fields.workspace) : null;
	const rows = await db.many(
		db.sql`UPDATE builds SET status = ${fields.status}, reason = COALESCE(${fields.reason ?? null}, reason),
			workspace = COALESCE(${workspace}, workspace), live_key = NULL, held_action = NULL,
			ended_at = ${fields.now}, updated_at = ${fields.now},
			credential_until = CASE WHEN credential_until IS NULL OR credential_until > ${fields.credentialUntil}
				THEN ${fields.credentialUntil} ELSE credential_until END
			WHERE id = ${id} AND status IN ${db.sql([...LIVE_BUILD_STATUSES])} RETURNING id`,
	);
	return rows.length === 1;
}

/** An ended run's status changed by a late report (finished → succeeded, say); only from `from`. */
export async function restatus(db: Db, id: string, from: BuildStatus, to: BuildStatus, now: number) {
	await db.sql`UPDATE builds SET status = ${to}, updated_at = ${now} WHERE id = ${id} AND status = ${from}`;
}

/** Discarded: off the page's list, its credential over now, nothing to match a duplicate start. */
export async function discardBuild(db: Db, id: string, now: number): Promise<boolean> {
	const rows = await db.many(
		db.sql`UPDATE builds SET discarded_at = ${now}, live_key = NULL, updated_at = ${now},
			credential_until = ${now}
			WHERE id = ${id} AND discarded_at IS NULL RETURNING id`,
	);
	return rows.length === 1;
}

/** The run's reports (stages, blocker, pull requests, result) as the agent's tools left them. */
export async function saveReports(
	db: Db,
	id: string,
	b: Pick<Build, "stages" | "blocker" | "pullRequests" | "result">,
	now: number,
): Promise<void> {
	await db.sql`UPDATE builds SET stages = ${JSON.stringify(b.stages)},
		blocker = ${b.blocker ? JSON.stringify(b.blocker) : null},
		pull_requests = ${JSON.stringify(b.pullRequests)},
		result = ${b.result ? JSON.stringify(b.result) : null}, updated_at = ${now}
		WHERE id = ${id}`;
}

/** A person's control: held, or sent with its request id (null: none pending). */
export async function saveControl(
	db: Db,
	id: string,
	fields: { held: "stop" | "discard" | null; request: string | null; control: Control | null; now: number },
): Promise<void> {
	await db.sql`UPDATE builds SET held_action = ${fields.held}, control_request = ${fields.request},
		control = ${fields.control ? JSON.stringify(fields.control) : null}, updated_at = ${fields.now}
		WHERE id = ${id}`;
}
