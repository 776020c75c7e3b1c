// Stopping the running daemon without revoking anything: asked on its control socket, then waited for until its
// process is gone (it stops its runs and Planner backends first, each in bounded time). Used by `chopin stop` and
// `chopin disconnect`.
import { ipcRequest } from "../local/ipc";
import { isAlive } from "../local/process-liveness";
import type { CliContext } from "../program/context";
import { CliError } from "../program/errors";

/** How long a stopped daemon may take to end: its runs' cancel (3 s) and their processes' grace (5 s), with room. */
export const DAEMON_EXIT_WAIT_MS = 30_000;
const EXIT_POLL_MS = 100;

export type StopOutcome = { stopped: true; pid: number } | { stopped: false };

/** Asks a running daemon to stop and waits for its process to end; no daemon is `{ stopped: false }`. */
export async function stopDaemon(ctx: Pick<CliContext, "paths" | "clock" | "signal">): Promise<StopOutcome> {
	const options = { socket: ctx.paths.socket, clock: ctx.clock, signal: ctx.signal };
	let pid: number;
	try {
		pid = (await ipcRequest(options, { type: "status" })).status.pid;
		await ipcRequest(options, { type: "stop" });
	} catch (error) {
		if (error instanceof CliError && error.code === "daemon-not-running") return { stopped: false };
		throw error;
	}
	const deadline = ctx.clock.now() + DAEMON_EXIT_WAIT_MS;
	while (isAlive({ pid }) && ctx.clock.now() < deadline) await ctx.clock.sleep(EXIT_POLL_MS, ctx.signal);
	if (isAlive({ pid })) {
		throw new CliError(
			"daemon-stop-timeout",
			`The chopin daemon (pid ${pid}) was asked to stop but still runs after ${DAEMON_EXIT_WAIT_MS / 1000} s.`,
			"It may still be stopping its runs and backends: `chopin status` shows when it is gone.",
		);
	}
	return { stopped: true, pid };
}
