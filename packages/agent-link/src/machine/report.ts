/**
 * What a machine reports about itself, apart from the rest of chopin.machine.v1: how it was
 * installed, its runs and its Planner backends. Its own module (and export) so `chopin status`
 * builds these few schemas without every message's (docs/install.md § Start-up time).
 */
import { z } from "zod";
import { chars, count, idString } from "../schemas/fields";

export const INSTALL_METHODS = ["npm", "script", "binary", "source"] as const;

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

export const runStateSchema = z.strictObject({
	id: idString,
	status: z.enum(["running", "paused", "finished", "failed", "stopped"]),
	worktree: chars(1, 4096),
	document: idString.optional(),
});
export type RunState = z.infer<typeof runStateSchema>;

export const sandboxReportSchema = z.strictObject({
	kind: z.enum(["bwrap", "sandbox-exec", "none"]),
	reason: note.optional(),
});
