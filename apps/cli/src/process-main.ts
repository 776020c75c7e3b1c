// Every command but the plain `chopin status` (status-main.ts), behind main.ts: builds the full context and runs the
// command tree.
//
// Start-up time matters (every command pays it; see docs/install.md § Start-up time): the command tree and zod are
// loaded after the context, execa with the first command that spawns.
import { killLiveGroups } from "./processes/live-groups";
import { processContext } from "./program/process-context";
import { runAsProcess } from "./program/process-run";

/** Runs the command argv names (the user's words, without the binary) and returns its exit code. */
export async function runProcess(argv: readonly string[]): Promise<number> {
	// Whatever ends this process, no Planner backend it started outlives it (see live-groups.ts).
	process.on("exit", () => killLiveGroups());
	return runAsProcess(processContext, async (ctx) => {
		await import("./program/zod-jitless");
		await (await import("./program/program")).runCli(argv, ctx);
	});
}
