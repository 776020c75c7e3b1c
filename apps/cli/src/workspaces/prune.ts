// Which run workspaces `chopin workspaces prune` removes: ended runs (a final status in run.json) that ended longer
// ago than the cutoff. A live run's record, a damaged one and every Planner workspace are never touched.
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { isAlive } from "../local/process-liveness";
import type { GitDeps } from "../machine/git";
import type { CheckoutGate } from "./gate";
import { formatDuration } from "./prune-age";
import { listRunRecords, type RunRecord, readRunRecord, runEnded, runsDir } from "./run-record";
import { REMOVING_PREFIX, removeRunWorkspace } from "./run-workspace";

export interface PruneOptions {
	stateDir: string;
	now: number;
	/** Runs that ended at least this long ago go. */
	olderThanMs: number;
	/** Say what would go, remove nothing. */
	dryRun: boolean;
}

export interface PrunedRun {
	record: RunRecord;
	/** After a real prune: what became of the keep ref (`removed`, or why not). */
	keepRef?: "removed" | { problem: string };
}

export interface PruneOutcome {
	removed: PrunedRun[];
	kept: { id: string; reason: string }[];
}

/**
 * The rule, which lets prune run beside a daemon that holds runs: only the record's status counts,
 * and only a final one (`finished`, `failed`, `stopped`) with `endedAt` (else `createdAt`) at least
 * `olderThanMs` before now is removed. The daemon writes a run's record before its workspace and
 * keeps it current, so a live run (`preparing`, `running`, `paused`) is never pruned, and a final
 * status is final: no run leaves it. The record is read again just before its folder is renamed away.
 */
export async function pruneRuns(
	deps: GitDeps,
	gate: CheckoutGate,
	options: PruneOptions,
): Promise<PruneOutcome> {
	if (!options.dryRun) sweepAbandoned(options.stateDir);
	const outcome: PruneOutcome = { removed: [], kept: [] };
	for (const listed of listRunRecords(options.stateDir)) {
		const verdict = listed.record ? judge(listed.record, options) : listed.problem;
		if (verdict !== undefined) {
			outcome.kept.push({ id: listed.id, reason: verdict });
			continue;
		}
		if (options.dryRun) {
			outcome.removed.push({ record: listed.record! });
			continue;
		}
		const fresh = readRunRecord(options.stateDir, listed.id);
		const again = fresh ? judge(fresh, options) : "its run.json is gone";
		if (again !== undefined || !fresh) {
			outcome.kept.push({ id: listed.id, reason: again ?? "its run.json is gone" });
			continue;
		}
		const removed = await removeRunWorkspace(deps, gate, { stateDir: options.stateDir, record: fresh });
		outcome.removed.push({ record: fresh, keepRef: removed.keepRef });
	}
	return outcome;
}

/** Why a run stays, or undefined when it goes. */
function judge(record: RunRecord, options: PruneOptions): string | undefined {
	if (!runEnded(record)) return `it has not ended (${record.status})`;
	const endedAt = record.endedAt ?? record.createdAt;
	if (options.now - endedAt < options.olderThanMs)
		return `it ended less than ${formatDuration(options.olderThanMs)} ago`;
	return undefined;
}

/** A folder an interrupted prune renamed away and did not finish deleting (its process is gone). */
function sweepAbandoned(stateDir: string): void {
	let names: string[];
	try {
		names = readdirSync(runsDir(stateDir));
	} catch {
		return;
	}
	for (const name of names) {
		if (!name.startsWith(REMOVING_PREFIX)) continue;
		const pid = Number(name.split("-").at(-1));
		if (Number.isInteger(pid) && pid !== process.pid && isAlive({ pid })) continue;
		rmSync(join(runsDir(stateDir), name), { recursive: true, force: true });
	}
}
