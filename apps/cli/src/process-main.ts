// Every command but the plain `chopin status` (status-main.ts), behind main.ts: builds the full context and runs the
// command tree.
//
// Start-up time matters (every command pays it; see docs/install.md § Start-up time): the command tree and zod are
// loaded after the context, execa with the first command that spawns.
import { killLiveScopes } from "./processes/live-scopes";
import { processContext } from "./program/process-context";
import { runAsProcess } from "./program/process-run";

/** Runs the command argv names (the user's words, without the binary) and returns its exit code. */
export async function runProcess(argv: readonly string[]): Promise<number> {
	// Whatever ends this process, nothing a Planner backend or a run started outlives it (see live-scopes.ts).
	process.on("exit", () => killLiveScopes());
	return runAsProcess(processContext, async (ctx) => {
		await import("./program/zod-jitless");
		await (await import("./program/program")).runCli(argv, ctx);
	});
}
