/** Run cards: the workflow runs a runs report shows, as full cards or, with run-stage-deltas, delta cards. */
import { z } from "zod";
import { PARENT_IDS_MAX, STAGES_MAX } from "../limits";
import { count, idString, nameString, noteString } from "./fields";

export const RUN_STATUSES = [
	"running",
	"waiting",
	"paused",
	"finished",
	"blocked",
	"failed",
	"stopped",
] as const;
export const STAGE_STATUSES = [
	"pending",
	"running",
	"awaiting_input",
	"paused",
	"blocked",
	"completed",
	"failed",
	"skipped",
	"stopped",
] as const;

/**
 * kind is a label the client defines (the spec's only example is "tool"), so any name of 1 to
 * 128 characters is accepted.
 */
export const stageSchema = z.strictObject({
	id: idString,
	name: noteString,
	parentIds: z.array(idString).max(PARENT_IDS_MAX).optional(),
	kind: nameString.optional(),
	status: z.enum(STAGE_STATUSES),
	started: count.optional(),
	ended: count.optional(),
});
export type Stage = z.infer<typeof stageSchema>;

/** Fields a full and a delta card share; times are whole seconds since the epoch. */
const cardFields = {
	id: idString,
	name: noteString,
	status: z.enum(RUN_STATUSES),
	started: count,
	updated: count,
	ended: count.optional(),
	waiting: count,
};

/**
 * A full card: its stages (the 64 most recent) replace the run's, and earlierStages counts the
 * ones before them. stagesDelta is listed only so the two kinds can be told apart; it is never sent.
 */
export const fullRunCardSchema = z.strictObject({
	...cardFields,
	stagesDelta: z.undefined().optional(),
	stages: z.array(stageSchema).max(STAGES_MAX),
	earlierStages: count.optional(),
});
export type FullRunCard = z.infer<typeof fullRunCardSchema>;

/** A delta card (run-stage-deltas): new and changed stages only, with no count limit. */
export const deltaRunCardSchema = z.strictObject({
	...cardFields,
	stagesDelta: z.literal(true),
	stages: z.array(stageSchema),
});
export type DeltaRunCard = z.infer<typeof deltaRunCardSchema>;

export const runCardSchema = z.discriminatedUnion("stagesDelta", [fullRunCardSchema, deltaRunCardSchema]);
export type RunCard = z.infer<typeof runCardSchema>;
