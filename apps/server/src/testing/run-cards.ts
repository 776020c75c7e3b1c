// Run cards and stages for agent-connection tests of runs reports: small builders with spec-valid defaults.
import type { Stage } from "@chopin/agent-link";

export const T0 = 1_760_000_000;

/** A stage; status completed unless given. */
export const stage = (id: string, fields: Partial<Stage> = {}): Stage => ({
	id,
	name: `Stage ${id}`,
	status: "completed",
	...fields,
});

/** A full card (no stages unless given); pass stagesDelta: true for a delta card. */
export const card = (id: string, fields: Record<string, unknown> = {}) => ({
	id,
	name: `Run ${id}`,
	status: "running",
	started: T0,
	updated: T0 + 100,
	stages: [] as Stage[],
	waiting: 0,
	...fields,
});

/** A delta card of these stages. */
export const delta = (id: string, stages: Stage[], fields: Record<string, unknown> = {}) =>
	card(id, { stagesDelta: true, stages, ...fields });

/** `count` stages named `${prefix}${i}`, completed, from `from`. */
export const stages = (prefix: string, count: number, from = 0): Stage[] =>
	Array.from({ length: count }, (_, i) => stage(`${prefix}${from + i}`, { started: T0 + from + i }));
