// The statuses Chat shows for a run and its stages, from what was reported (spec: runs): stopped where a
// failure or stop above makes unfinished work moot, and finished only once the run says when it ended.
import type { RUN_STATUSES, STAGE_STATUSES, Stage } from "@chopin/agent-link";
import type { StoredCard } from "./merge";

export type RunStatus = (typeof RUN_STATUSES)[number];
export type StageStatus = (typeof STAGE_STATUSES)[number];

/** Stage statuses that are not an outcome yet. */
const UNFINISHED: ReadonlySet<StageStatus> = new Set(["pending", "running", "awaiting_input", "paused"]);
/** A stage with one of these makes its unfinished descendants show stopped. */
const STOPS_DESCENDANTS: ReadonlySet<StageStatus> = new Set(["stopped", "failed", "blocked", "skipped"]);
/** A run with one of these makes every unfinished stage show stopped. */
const STOPS_RUN: ReadonlySet<RunStatus> = new Set(["stopped", "failed", "blocked"]);
/** Runs still going, as shown. */
const LIVE: ReadonlySet<RunStatus> = new Set(["running", "waiting", "paused"]);

/** A finished card without `ended` is still live as Chat shows it (and gets no finish notice). */
export function displayRunStatus(card: Pick<StoredCard, "status" | "ended">): RunStatus {
	return card.status === "finished" && card.ended === undefined ? "running" : card.status;
}

/** Whether a run, as shown, is still going: running, waiting or paused. Finished, failed, stopped and blocked runs have ended. */
export function isLive(displayStatus: RunStatus): boolean {
	return LIVE.has(displayStatus);
}

/**
 * Each stage's status as shown. A stopped, failed or blocked run stops every unfinished stage, with
 * or without parent links. Otherwise an unfinished stage shows stopped when any stage above it (by
 * parentIds, through any depth, over all of the run's stages) is stopped, failed, blocked or skipped.
 * Finished outcomes stay as reported; a parent id the run does not know is no parent yet.
 */
export function displayStageStatuses(stages: readonly Stage[], runStatus: RunStatus): StageStatus[] {
	if (STOPS_RUN.has(runStatus)) return stages.map((s) => (UNFINISHED.has(s.status) ? "stopped" : s.status));
	const children = new Map<string, string[]>();
	for (const stage of stages) {
		for (const parentId of stage.parentIds ?? [])
			children.set(parentId, [...(children.get(parentId) ?? []), stage.id]);
	}
	// Walk down from every stage that stops its descendants; the visited set also ends any cycle of links.
	const below = new Set<string>();
	const queue = stages
		.filter((s) => STOPS_DESCENDANTS.has(s.status))
		.flatMap((s) => children.get(s.id) ?? []);
	while (queue.length) {
		const id = queue.pop()!;
		if (below.has(id)) continue;
		below.add(id);
		queue.push(...(children.get(id) ?? []));
	}
	return stages.map((s) => (UNFINISHED.has(s.status) && below.has(s.id) ? "stopped" : s.status));
}
