// A run card as Chat shows it: the card last reported, every stored stage, and the statuses to display.
import { RUN_STATUSES, STAGE_STATUSES, stageSchema } from "@chopin/agent-link";
import { z } from "zod";

export const stageViewSchema = stageSchema.extend({
	/** The status to show: the reported one, or stopped by the rules in runs/display.ts. */
	displayStatus: z.enum(STAGE_STATUSES),
});
export type StageView = z.infer<typeof stageViewSchema>;

export const runCardViewSchema = z.strictObject({
	id: z.string(),
	/** The agent session that reported it. */
	session: z.string().nullable(),
	name: z.string(),
	/** What the client reported (or stopped, once its link closed). */
	reportedStatus: z.enum(RUN_STATUSES),
	/** What Chat shows: finished only with ended, else running. */
	displayStatus: z.enum(RUN_STATUSES),
	/** Whether the run is still going as shown: running, waiting or paused. */
	live: z.boolean(),
	started: z.int().nonnegative(),
	updated: z.int().nonnegative(),
	ended: z.int().nonnegative().optional(),
	waiting: z.int().nonnegative(),
	/** Stages the run reached before the stored ones, from its last full card. */
	earlierStages: z.int().nonnegative(),
	/** Every stored stage, in order. */
	stages: z.array(stageViewSchema),
	/** The Planner that reports it dropped its link and keeps the run for its return: shown as last reported. */
	disconnected: z.literal(true).optional(),
});
export type RunCardView = z.infer<typeof runCardViewSchema>;
