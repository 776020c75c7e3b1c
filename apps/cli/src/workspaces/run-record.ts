// <state>/runs/<run id>/: a run's workspace and its record run.json (0600, written atomically), which the run
// manager keeps current as the run goes and `chopin workspaces` reads to list and prune.
import { readdirSync } from "node:fs";
import { join, posix, win32 } from "node:path";
import {
	commitSchema,
	FINAL_MACHINE_RUN_STATUSES,
	machineRunStatusSchema,
	RUN_ID_PATTERN,
	runIdSchema,
	runKindSchema,
} from "@chopin/agent-link/machine";
import { z } from "zod";
import { readJsonFile, writeJsonAtomic } from "../local/files";
import { ensurePrivateDir } from "../local/paths";
import { repositorySchema } from "../machine/machine-config";
import { CliError } from "../program/errors";

const absolutePath = z
	.string()
	.min(1)
	.max(4096)
	.refine((p) => posix.isAbsolute(p) || win32.isAbsolute(p), "must be an absolute path");

export const runRecordSchema = z.strictObject({
	version: z.literal(1),
	id: runIdSchema,
	kind: runKindSchema,
	document: z.strictObject({ id: z.string().min(1).max(200), url: z.string().min(1).max(2048) }),
	repository: repositorySchema,
	/** The person's checkout the workspace borrows from (and holds the keep ref). */
	checkout: absolutePath,
	/** <state>/runs/<run id>/workspace */
	workspace: absolutePath,
	branch: z.string().min(1).max(256),
	/** The exact commit the workspace started at. */
	base: commitSchema,
	status: machineRunStatusSchema,
	/** Milliseconds since the epoch. */
	createdAt: z.int().nonnegative(),
	/** When it reached a final status (finished, failed, stopped). */
	endedAt: z.int().nonnegative().optional(),
});
export type RunRecord = z.infer<typeof runRecordSchema>;

export function runsDir(stateDir: string): string {
	return join(stateDir, "runs");
}

export function runDir(stateDir: string, runId: string): string {
	if (!RUN_ID_PATTERN.test(runId)) {
		throw new CliError("run-record-invalid", `${JSON.stringify(runId)} is not a run id.`);
	}
	return join(runsDir(stateDir), runId);
}

export function runWorkspacePath(stateDir: string, runId: string): string {
	return join(runDir(stateDir, runId), "workspace");
}

export function runRecordPath(stateDir: string, runId: string): string {
	return join(runDir(stateDir, runId), "run.json");
}

/** Whether a run is over: a final status. Only such a run's workspace may be pruned. */
export function runEnded(record: Pick<RunRecord, "status">): boolean {
	return FINAL_MACHINE_RUN_STATUSES.has(record.status);
}

/** Writes the record (checked against the schema first) atomically at 0600, making its 0700 folder. */
export function writeRunRecord(stateDir: string, record: RunRecord): void {
	const checked = runRecordSchema.parse(record);
	ensurePrivateDir(runsDir(stateDir));
	ensurePrivateDir(runDir(stateDir, checked.id));
	writeJsonAtomic(runRecordPath(stateDir, checked.id), checked, { mode: 0o600 });
}

/** The record, or undefined when there is none; a damaged one is `run-record-invalid`, naming the file. */
export function readRunRecord(stateDir: string, runId: string): RunRecord | undefined {
	return readJsonFile(runRecordPath(stateDir, runId), runRecordSchema, {
		code: "run-record-invalid",
		what: "run record",
	});
}

export type ListedRun = { id: string; dir: string } & (
	| { record: RunRecord; problem?: undefined }
	| { record?: undefined; problem: string }
);

/** Every folder under <state>/runs named like a run, with its record or what is wrong with it, oldest first. */
export function listRunRecords(stateDir: string): ListedRun[] {
	let names: string[];
	try {
		names = readdirSync(runsDir(stateDir));
	} catch {
		return [];
	}
	const out: ListedRun[] = [];
	for (const id of names.filter((name) => RUN_ID_PATTERN.test(name)).sort()) {
		const dir = join(runsDir(stateDir), id);
		try {
			const record = readRunRecord(stateDir, id);
			if (!record) out.push({ id, dir, problem: "it has no run.json" });
			else if (record.id !== id) out.push({ id, dir, problem: `its run.json is run ${record.id}'s` });
			else out.push({ id, dir, record });
		} catch (error) {
			out.push({ id, dir, problem: (error as Error).message });
		}
	}
	return out.sort((a, b) => (a.record?.createdAt ?? 0) - (b.record?.createdAt ?? 0));
}
