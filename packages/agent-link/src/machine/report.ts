/**
 * What a machine reports about itself, apart from the rest of chopin.machine.v1: how it was
 * installed, its runs and its Planner backends. Its own module (and export) so `chopin status`
 * builds these few schemas without every message's (docs/install.md § Start-up time).
 */
import { z } from "zod";
import { chars, count, idString } from "../schemas/fields";

/** How the CLI was installed: by a package manager (npm, pnpm, yarn, bun), an install script, by hand, or a clone. */
export const INSTALL_METHODS = ["npm", "pnpm", "yarn", "bun", "script", "binary", "source"] as const;

const note = chars(0, 4000);
const millis = count;

export const plannerStateSchema = z.strictObject({
	document: idString,
	url: chars(0, 2048).optional(),
	state: z.enum(["starting", "running", "backoff", "stopped", "failed"]),
	worktree: chars(1, 4096),
	checkout: chars(1, 4096),
	pid: count.optional(),
	since: millis,
	restarts: count,
	sandbox: z.enum(["bwrap", "sandbox-exec", "none"]),
	reason: note.optional(),
});
export type PlannerState = z.infer<typeof plannerStateSchema>;

/**
 * What a run is doing as its machine says it. `preparing`: claimed, its workspace being made.
 * `paused`: its processes are stopped (the control channel dropped) until a person resumes it.
 * The rest are final: `finished` (the agent ended its turn), `failed` (it could not start, or the
 * agent failed or refused), `stopped` (a person stopped or discarded it, or the daemon stopped).
 */
export const MACHINE_RUN_STATUSES = [
	"preparing",
	"running",
	"paused",
	"finished",
	"failed",
	"stopped",
] as const;

/** A run the machine holds, as hello and report carry it (runs.ts has the rest of a run's messages). */
export const runStateSchema = z.strictObject({
	id: idString,
	status: z.enum(MACHINE_RUN_STATUSES),
	/** The run's workspace. */
	worktree: chars(1, 4096),
	document: idString.optional(),
	kind: z.enum(["build", "investigation"]).optional(),
	/** Its branch in the workspace. */
	branch: chars(1, 256).optional(),
	/** When it ended, for a final status. */
	endedAt: millis.optional(),
});
export type RunState = z.infer<typeof runStateSchema>;

export const sandboxReportSchema = z.strictObject({
	kind: z.enum(["bwrap", "sandbox-exec", "none"]),
	reason: note.optional(),
});
