// The machines table: a machine as code sees it, and the queries that read and write its row (both databases).
import {
	type Checkout,
	type ClientInfo,
	checkoutSchema,
	installMethodSchema,
	type PlannerState,
	plannerStateSchema,
	type RunnerReport,
	type RunState,
	runnerReportSchema,
	runStateSchema,
	sandboxReportSchema,
} from "@chopin/agent-link/machine";
import { z } from "zod";
import type { StoredAuthorization } from "../auth/authorization";
import { dbBoolean, dbJson } from "../store/codecs";
import type { Db } from "../store/store";
import { joinedAuthorization, joinedAuthorizationColumns, joinedAuthorizationSchema } from "./authorizations";

const machineRowSchema = z.object({
	id: z.string(),
	owner: z.string(),
	label: z.string(),
	client_version: z.string(),
	client_os: z.string(),
	client_arch: z.string(),
	client_install: installMethodSchema,
	repositories: dbJson(z.array(z.string())),
	checkouts: dbJson(z.array(checkoutSchema)),
	runs: dbJson(z.array(runStateSchema)),
	planners: dbJson(z.array(plannerStateSchema)),
	sandbox: dbJson(sandboxReportSchema).nullable(),
	runner: dbJson(runnerReportSchema).nullable(),
	auto_run: dbBoolean,
	credential_digest: z.string().nullable(),
	created_at: z.number(),
	last_contact_at: z.number(),
	reported_at: z.number().nullable(),
	revoked_at: z.number().nullable(),
	reauthorize: dbBoolean,
});
type MachineRow = z.infer<typeof machineRowSchema>;

export type SandboxReport = z.infer<typeof sandboxReportSchema>;

/** A machine as the server keeps it. */
export interface Machine {
	id: string;
	owner: string;
	label: string;
	client: ClientInfo;
	/** The repositories of its checkouts, as last reported (or as paired). */
	repositories: string[];
	checkouts: Checkout[];
	runs: RunState[];
	planners: PlannerState[];
	sandbox: SandboxReport | null;
	/** Whether it can run builds, as last reported; null from a CLI that does not report it (before builds). */
	runner: RunnerReport | null;
	autoRun: boolean;
	/** False until its pairing was claimed: such a machine holds no credential yet. */
	claimed: boolean;
	createdAt: number;
	lastContactAt: number;
	reportedAt: number | null;
	revokedAt: number | null;
	/** Its authorization ended for good: every call gets machine-reauthorize until it is paired again. */
	reauthorize: boolean;
}

function toMachine(row: MachineRow): Machine {
	return {
		id: row.id,
		owner: row.owner,
		label: row.label,
		client: {
			version: row.client_version,
			os: row.client_os,
			arch: row.client_arch,
			install: row.client_install,
		},
		repositories: row.repositories,
		checkouts: row.checkouts,
		runs: row.runs,
		planners: row.planners,
		sandbox: row.sandbox,
		runner: row.runner,
		autoRun: row.auto_run,
		claimed: row.credential_digest !== null,
		createdAt: row.created_at,
		lastContactAt: row.last_contact_at,
		reportedAt: row.reported_at,
		revokedAt: row.revoked_at,
		reauthorize: row.reauthorize,
	};
}

/** The few columns a credential check needs, for the hot path. */
const credentialRowSchema = z.object({
	id: z.string(),
	owner: z.string(),
	credential_digest: z.string(),
	revoked_at: z.number().nullable(),
	reauthorize: dbBoolean,
});
export type CredentialRow = z.infer<typeof credentialRowSchema>;

export interface NewMachine {
	id: string;
	owner: string;
	label: string;
	client: ClientInfo;
	checkouts: Checkout[];
	autoRun: boolean;
	now: number;
}

export async function insertMachine(db: Db, m: NewMachine): Promise<void> {
	const repositories = uniqueRepositories(m.checkouts);
	await db.sql`INSERT INTO machines ${db.sql({
		id: m.id,
		owner: m.owner,
		label: m.label,
		client_version: m.client.version,
		client_os: m.client.os,
		client_arch: m.client.arch,
		client_install: m.client.install,
		repositories: JSON.stringify(repositories),
		checkouts: JSON.stringify(m.checkouts),
		runs: "[]",
		planners: "[]",
		sandbox: null,
		runner: null,
		auto_run: m.autoRun,
		credential_digest: null,
		created_at: m.now,
		last_contact_at: m.now,
		reported_at: null,
		revoked_at: null,
		reauthorize: false,
	})}`;
}

export async function getMachine(db: Db, id: string): Promise<Machine | undefined> {
	const row = await db.one(db.sql`SELECT * FROM machines WHERE id = ${id}`, machineRowSchema);
	return row && toMachine(row);
}

const credentialWithAuthorizationSchema = credentialRowSchema.extend(joinedAuthorizationSchema.shape);

/**
 * The row whose credential has this digest (revoked or not), or undefined; with the machine's stored
 * authorization in the same round trip (a LEFT JOIN on its primary key), which nearly every machine call
 * needs next (MachineAuthorizations.get).
 */
export async function findByDigest(
	db: Db,
	digest: string,
): Promise<{ row: CredentialRow; authorization: StoredAuthorization | undefined } | undefined> {
	const found = await db.one(
		db.sql`SELECT m.id, m.owner, m.credential_digest, m.revoked_at, m.reauthorize, ${joinedAuthorizationColumns(db)}
			FROM machines m LEFT JOIN machine_authorizations a ON a.machine_id = m.id
			WHERE m.credential_digest = ${digest}`,
		credentialWithAuthorizationSchema,
	);
	if (!found) return undefined;
	const { id, owner, credential_digest, revoked_at, reauthorize } = found;
	return {
		row: { id, owner, credential_digest, revoked_at, reauthorize },
		authorization: joinedAuthorization(found),
	};
}

/** A person's paired machines (claimed, not revoked), most recently heard from first. */
export async function listByOwner(db: Db, owner: string): Promise<Machine[]> {
	const rows = await db.many(
		db.sql`SELECT * FROM machines
			WHERE owner = ${owner} AND credential_digest IS NOT NULL AND revoked_at IS NULL
			ORDER BY last_contact_at DESC, id`,
		machineRowSchema,
	);
	return rows.map(toMachine);
}

/** Gives the machine its credential: true when this call did (the pairing's one claim). */
export async function setCredential(db: Db, id: string, digest: string, now: number): Promise<boolean> {
	const rows = await db.many(
		db.sql`UPDATE machines SET credential_digest = ${digest}, last_contact_at = ${now}
			WHERE id = ${id} AND credential_digest IS NULL AND revoked_at IS NULL RETURNING id`,
	);
	return rows.length === 1;
}

/** Marks the machine revoked; true when it was not already. */
export async function revokeMachine(db: Db, id: string, now: number): Promise<boolean> {
	const rows = await db.many(
		db.sql`UPDATE machines SET revoked_at = ${now} WHERE id = ${id} AND revoked_at IS NULL RETURNING id`,
	);
	return rows.length === 1;
}

/** Marks the machine as needing a new pairing; true when it was not already. */
export async function markReauthorize(db: Db, id: string): Promise<boolean> {
	const rows = await db.many(
		db.sql`UPDATE machines SET reauthorize = 1 WHERE id = ${id} AND reauthorize = 0 RETURNING id`,
	);
	return rows.length === 1;
}

export async function touchMachine(db: Db, id: string, now: number): Promise<void> {
	await db.sql`UPDATE machines SET last_contact_at = ${now} WHERE id = ${id} AND last_contact_at < ${now}`;
}

export interface MachineState {
	checkouts: Checkout[];
	runs: RunState[];
	planners: PlannerState[];
	sandbox: SandboxReport;
	runner?: RunnerReport;
}

/** A hello's or report's complete state, as the machine's stored state, and the CLI it runs. */
export async function saveState(
	db: Db,
	id: string,
	state: MachineState,
	client: ClientInfo | undefined,
	now: number,
): Promise<void> {
	const repositories = JSON.stringify(uniqueRepositories(state.checkouts));
	const checkouts = JSON.stringify(state.checkouts);
	const runs = JSON.stringify(state.runs);
	const planners = JSON.stringify(state.planners);
	const sandbox = JSON.stringify(state.sandbox);
	const runner = state.runner ? JSON.stringify(state.runner) : null;
	if (client) {
		await db.sql`UPDATE machines SET repositories = ${repositories}, checkouts = ${checkouts}, runs = ${runs},
			planners = ${planners}, sandbox = ${sandbox}, runner = ${runner}, reported_at = ${now}, last_contact_at = ${now},
			client_version = ${client.version}, client_os = ${client.os}, client_arch = ${client.arch},
			client_install = ${client.install}
			WHERE id = ${id}`;
		return;
	}
	await db.sql`UPDATE machines SET repositories = ${repositories}, checkouts = ${checkouts}, runs = ${runs},
		planners = ${planners}, sandbox = ${sandbox}, runner = ${runner}, reported_at = ${now}, last_contact_at = ${now}
		WHERE id = ${id}`;
}

/** Each repository once, in the order its first checkout names it (names compare without case). */
export function uniqueRepositories(checkouts: readonly Checkout[]): string[] {
	const seen = new Map<string, string>();
	for (const c of checkouts)
		if (!seen.has(c.repository.toLowerCase())) seen.set(c.repository.toLowerCase(), c.repository);
	return [...seen.values()];
}
