// The plain `chopin status` and `chopin status --json`, run straight from main.ts: the status context (paths, the log,
// the daemon's socket, the server for an account lookup) without process-main.ts, the command tree or the rest of the
// context.
//
// Scripts and prompts run `chopin status --json` often, and everything else a command loads costs it more than the
// status itself (docs/install.md § Start-up time). So this module finds the daemon's socket and sends the status
// request first, and only then loads the rest (status-process.ts), while the daemon answers. The run is the command
// tree's own (status-run.ts), with the same Ctrl-C handling, errors and exit codes; shortcuts.test.ts checks both
// print the same.
import { processPlace } from "./program/process-place";
import type { Shortcut } from "./program/shortcuts";
import { askDaemonStatus } from "./status/daemon-ask";

export async function runStatusProcess(shortcut: Shortcut): Promise<number> {
	const place = processPlace();
	// The command's own: Ctrl-C aborts the request too, once runAsProcess listens for it.
	const controller = new AbortController();
	const asked = askDaemonStatus(place.paths.socket, controller.signal);
	// Written before anything more is loaded: the connection opens on the event loop's next turn.
	await asked.sent;
	const { runAskedStatus } = await import("./status-process");
	return runAskedStatus({ shortcut, place, controller, answer: asked.answer });
}
