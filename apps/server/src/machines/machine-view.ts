// A machine as the Machines page and the API show it: online or when last heard from, its last report, and
// its runs as shown (a dropped machine's live runs say "machine offline" for MACHINE_OFFLINE_GRACE_MS, then that they
// need a person's decision, as the document page's run cards do).
import {
	checkoutSchema,
	clientInfoSchema,
	plannerStateSchema,
	runnerReportSchema,
	runStateSchema,
	sandboxReportSchema,
} from "@chopin/agent-link/machine";
import { z } from "zod";
import type { Machine } from "./machine-rows";

export const RUN_DISPLAY_STATUSES = [
	"preparing",
	"running",
	"paused",
	"finished",
	"failed",
	"stopped",
	"machine-offline",
	"needs-decision",
] as const;

export const machineRunViewSchema = runStateSchema.extend({
	/** What to show: as reported while the machine is online; "machine-offline", then "needs-decision", while it is away. */
	displayStatus: z.enum(RUN_DISPLAY_STATUSES),
	/** Set while the run shows machine-offline: when it will need a decision unless the machine is back. */
	offlineUntil: z.number().optional(),
});
export type MachineRunView = z.infer<typeof machineRunViewSchema>;

export const machineViewSchema = z.strictObject({
	id: z.string(),
	label: z.string(),
	owner: z.string(),
	client: clientInfoSchema,
	autoRun: z.boolean(),
	repositories: z.array(z.string()),
	checkouts: z.array(checkoutSchema),
	online: z.boolean(),
	createdAt: z.number(),
	lastContactAt: z.number(),
	/** When its last report arrived, if one did. */
	reportedAt: z.number().nullable(),
	/** Its GitHub authorization ended: it must be paired again. */
	reauthorize: z.boolean(),
	sandbox: sandboxReportSchema.nullable(),
	/** Whether it can run builds, as last reported; null from a CLI before builds (it cannot). */
	runner: runnerReportSchema.nullable(),
	/** The Planner backends it runs, with their worktrees, as last reported. */
	planners: z.array(plannerStateSchema),
	runs: z.array(machineRunViewSchema),
	/** The documents Chopin asks it to run a Planner for. */
	assigned: z.array(z.string()),
});
export type MachineView = z.infer<typeof machineViewSchema>;

/** How a reported run shows, given whether its machine is online and since when it is away. */
export function runDisplay(
	run: Machine["runs"][number],
	online: boolean,
	offlineSince: number,
	now: number,
	graceMs: number,
): MachineRunView {
	const live = run.status === "preparing" || run.status === "running" || run.status === "paused";
	if (online || !live) return { ...run, displayStatus: run.status };
	const until = offlineSince + graceMs;
	if (now < until) return { ...run, displayStatus: "machine-offline", offlineUntil: until };
	// Past the grace period nothing is decided for the person: the run waits for them (discard it, or wait on).
	return { ...run, displayStatus: "needs-decision" };
}

export function toMachineView(
	machine: Machine,
	options: { online: boolean; now: number; graceMs: number; assigned: string[] },
): MachineView {
	const { online, now, graceMs } = options;
	return {
		id: machine.id,
		label: machine.label,
		owner: machine.owner,
		client: machine.client,
		autoRun: machine.autoRun,
		repositories: machine.repositories,
		checkouts: machine.checkouts,
		online,
		createdAt: machine.createdAt,
		lastContactAt: machine.lastContactAt,
		reportedAt: machine.reportedAt,
		reauthorize: machine.reauthorize,
		sandbox: machine.sandbox,
		runner: machine.runner,
		planners: machine.planners,
		// Away since it was last heard from: that is durable, so a restart does not reset the grace.
		runs: machine.runs.map((r) => runDisplay(r, online, machine.lastContactAt, now, graceMs)),
		assigned: options.assigned,
	};
}
