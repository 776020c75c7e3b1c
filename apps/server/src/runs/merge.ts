// How a reported run card changes the stored run (spec: runs, Run stage deltas): a full card's stages replace
// the run's unless it has none, a delta card's are merged by id, and earlierStages comes from the last full card.
import type { RunCard, Stage } from "@chopin/agent-link";
import { RUN_STATUSES } from "@chopin/agent-link";
import { z } from "zod";

/** A card as stored: its reported fields (not its stages) and the earlierStages of its last full card. */
export const storedCardSchema = z.strictObject({
	id: z.string(),
	name: z.string(),
	status: z.enum(RUN_STATUSES),
	started: z.int().nonnegative(),
	updated: z.int().nonnegative(),
	ended: z.int().nonnegative().optional(),
	waiting: z.int().nonnegative(),
	earlierStages: z.int().nonnegative(),
});
export type StoredCard = z.infer<typeof storedCardSchema>;

export interface StoredRun {
	card: StoredCard;
	/** Every stage Chopin stores for the run, in order. */
	stages: Stage[];
}

/**
 * Adds stages by id: a known id is replaced whole where it stands (so an optional field left out is
 * gone), a new one follows the others in the order sent, and an id sent twice keeps its last value
 * at the place it first took. Nothing is removed.
 */
export function mergeStages(stages: readonly Stage[], added: readonly Stage[]): Stage[] {
	const byId = new Map<string, Stage>();
	for (const stage of stages) byId.set(stage.id, stage);
	for (const stage of added) byId.set(stage.id, stage);
	return [...byId.values()];
}

/** The run after one reported card. */
export function applyCard(previous: StoredRun | undefined, card: RunCard): StoredRun {
	const fields = {
		id: card.id,
		name: card.name,
		status: card.status,
		started: card.started,
		updated: card.updated,
		...(card.ended !== undefined && { ended: card.ended }),
		waiting: card.waiting,
	};
	if (card.stagesDelta) {
		// A delta keeps the earlierStages of the run's last full card, and never removes a stage.
		return {
			card: { ...fields, earlierStages: previous?.card.earlierStages ?? 0 },
			stages: mergeStages(previous?.stages ?? [], card.stages),
		};
	}
	if (card.stages.length === 0 && previous && previous.stages.length > 0) {
		// A reattached client may report an ended run whose stages it no longer holds: keep Chopin's.
		return { card: { ...fields, earlierStages: previous.card.earlierStages }, stages: previous.stages };
	}
	return {
		card: { ...fields, earlierStages: card.earlierStages ?? 0 },
		stages: mergeStages([], card.stages),
	};
}
