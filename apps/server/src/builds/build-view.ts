// A build or investigation as pages and the API show it: its stored state, the status to display (its machine
// away: machine-offline, then needs-decision), what a person can do with it, and what only its machine's owner sees.
import { runKindSchema } from "@chopin/agent-link/machine";
import { z } from "zod";
import {
	type Build,
	blockerSchema,
	controlSchema,
	pullRequestSchema,
	resultSchema,
	stageSchema,
} from "./build-rows";
import { BUILD_DISPLAY_STATUSES, BUILD_STATUSES, type BuildDisplayStatus, isLiveStatus } from "./statuses";

/** A run-control the machine has not answered within this long is shown unconfirmed, never done. */
export const CONTROL_ANSWER_MS = 10_000;

/** What a person with write access can do with a run now (the page shows these buttons). */
export const BUILD_ACTIONS = ["stop", "resume", "discard", "start-again"] as const;

export const buildViewSchema = z.strictObject({
	id: z.string(),
	documentId: z.string(),
	kind: runKindSchema,
	brief: z.string(),
	base: z.string(),
	requestedBy: z.string(),
	machine: z.strictObject({
		id: z.string(),
		owner: z.string(),
		online: z.boolean(),
		/** Only for the machine's owner; others read "@owner's machine". */
		label: z.string().optional(),
	}),
	/** As stored. */
	status: z.enum(BUILD_STATUSES),
	/** What to show: the status, or machine-offline / needs-decision while a live run's machine is away. */
	displayStatus: z.enum(BUILD_DISPLAY_STATUSES),
	/** Not final: offered, preparing, running or paused. */
	live: z.boolean(),
	/** With machine-offline: when it becomes needs-decision unless the machine is back. */
	offlineUntil: z.number().optional(),
	/** Why it is in its status, as the machine (or the server, for lost) said. */
	reason: z.string().optional(),
	stages: z.array(stageSchema),
	blocker: blockerSchema.optional(),
	pullRequests: z.array(pullRequestSchema),
	result: resultSchema.optional(),
	/** Where it works: the branch for everyone, the path only for the machine's owner. */
	workspace: z.strictObject({ branch: z.string(), path: z.string().optional() }).optional(),
	/** The last stop, resume or discard a person asked for, and where it stands. */
	control: controlSchema.optional(),
	actions: z.array(z.enum(BUILD_ACTIONS)),
	/** The number of its last log line (GET /api/builds/:id/log?after= reads them). */
	log: z.strictObject({ lastSeq: z.number() }),
	createdAt: z.number(),
	updatedAt: z.number(),
	claimedAt: z.number().optional(),
	endedAt: z.number().optional(),
});
export type BuildView = z.infer<typeof buildViewSchema>;

/** What the view needs to know of the run's machine. */
export interface ViewMachine {
	id: string;
	owner: string;
	label: string;
	online: boolean;
	/** When it was last heard from: a machine away is away since then. */
	lastContactAt: number;
}

export interface ViewOptions {
	now: number;
	/** MACHINE_OFFLINE_GRACE_MS. */
	graceMs: number;
	/** Who reads it: the machine's owner also sees its label and the workspace path. Live events have none. */
	viewer?: string;
}

/** How a run shows, given its machine. */
export function displayOf(
	build: Pick<Build, "status">,
	machine: Pick<ViewMachine, "online" | "lastContactAt">,
	now: number,
	graceMs: number,
): { displayStatus: BuildDisplayStatus; offlineUntil?: number } {
	if (!isLiveStatus(build.status) || machine.online) return { displayStatus: build.status };
	const until = machine.lastContactAt + graceMs;
	if (now < until) return { displayStatus: "machine-offline", offlineUntil: until };
	return { displayStatus: "needs-decision" };
}

export function toBuildView(build: Build, machine: ViewMachine, options: ViewOptions): BuildView {
	const { now, graceMs, viewer } = options;
	const own = viewer !== undefined && viewer.toLowerCase() === machine.owner.toLowerCase();
	const live = isLiveStatus(build.status);
	const display = displayOf(build, machine, now, graceMs);
	const actions: BuildView["actions"] = [];
	if (live) actions.push("stop");
	if (build.status === "paused" && machine.online) actions.push("resume");
	actions.push("discard");
	if (!live && build.status !== "succeeded") actions.push("start-again");
	let control = build.control ?? undefined;
	// A control still held when the run ended (by itself, or lost) was never sent: there is nothing to show.
	if (control?.state === "held" && !live) control = undefined;
	// Sent and unanswered for 10 s: said to be unconfirmed, whether or not the timer that says so has run.
	if (control?.state === "sent" && now - control.at >= CONTROL_ANSWER_MS) {
		control = { ...control, state: "unconfirmed" };
	}
	return {
		id: build.id,
		documentId: build.documentId,
		kind: build.kind,
		brief: build.brief,
		base: build.base,
		requestedBy: build.requestedBy,
		machine: {
			id: machine.id,
			owner: machine.owner,
			online: machine.online,
			...(own && { label: machine.label }),
		},
		status: build.status,
		...display,
		live,
		...(build.reason !== null && { reason: build.reason }),
		stages: build.stages,
		...(build.blocker && { blocker: build.blocker }),
		pullRequests: build.pullRequests,
		...(build.result && { result: build.result }),
		...(build.workspace && {
			workspace: { branch: build.workspace.branch, ...(own && { path: build.workspace.path }) },
		}),
		...(control && { control }),
		actions,
		log: { lastSeq: build.logSeq },
		createdAt: build.createdAt,
		updatedAt: build.updatedAt,
		...(build.claimedAt !== null && { claimedAt: build.claimedAt }),
		...(build.endedAt !== null && { endedAt: build.endedAt }),
	};
}
