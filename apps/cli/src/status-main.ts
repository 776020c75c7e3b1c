// The plain `chopin status` and `chopin status --json`, run straight from main.ts: the status context (paths, the log,
// the daemon's socket, the server for an account lookup) without process-main.ts, the command tree or the rest of the
// context.
//
// Scripts and prompts run `chopin status --json` often, and everything else a command loads costs it more than the
// status itself (docs/install.md § Start-up time). The run is the command tree's own (status-run.ts), with the same
// Ctrl-C handling, errors and exit codes; shortcuts.test.ts checks both print the same.
import { runStatus } from "./commands/status-run";
import { statusProcessContext } from "./program/process-context";
import { runAsProcess } from "./program/process-run";
import type { Shortcut } from "./program/shortcuts";

export function runStatusProcess(shortcut: Shortcut): Promise<number> {
	return runAsProcess(statusProcessContext, (ctx) => runStatus({ ...shortcut.options }, ctx));
}
