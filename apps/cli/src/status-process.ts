// The rest of the plain `chopin status [--json]`, loaded by status-main.ts once its request to the daemon is on its
// way: the status context and the command tree's own run (status-run.ts), given the daemon's answer as it comes.
import { runStatus } from "./commands/status-run";
import { statusProcessContext } from "./program/process-context";
import type { ProcessPlace } from "./program/process-place";
import { runAsProcess } from "./program/process-run";
import type { Shortcut } from "./program/shortcuts";
import type { DaemonAnswer } from "./status/daemon-ask";

export function runAskedStatus(asked: {
	shortcut: Shortcut;
	place: ProcessPlace;
	controller: AbortController;
	answer: () => Promise<DaemonAnswer>;
}): Promise<number> {
	return runAsProcess(
		(signal) => statusProcessContext(signal, asked.place),
		(ctx) => runStatus({ ...asked.shortcut.options }, ctx, asked.answer),
		asked.controller,
	);
}
