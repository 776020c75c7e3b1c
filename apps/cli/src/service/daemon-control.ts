// The daemon that answers on the control socket, and stopping it gracefully: through its socket (a `chopin run` in a
// terminal, before the service starts), or through <state>/stop-request (Task Scheduler ends a task without a signal).
import type { Clock } from "@chopin/agent-link/clock";
import { ipcRequest } from "../local/ipc";
import type { CliPaths, Platform } from "../local/paths";
import { isAlive } from "../local/process-liveness";
import { CliError } from "../program/errors";
import type { ServiceManagerKind } from "./names";
import type { ServiceFiles } from "./service-files";

export interface DaemonControlDeps {
	platform: Platform;
	paths: Pick<CliPaths, "socket" | "stopRequestFile">;
	clock: Clock;
	signal: AbortSignal;
	files: Pick<ServiceFiles, "write" | "remove">;
}

export interface RunningDaemon {
	pid: number;
	version: string;
	/** The service manager that runs it (`chopin run --service`), or undefined when started by hand. */
	service: ServiceManagerKind | undefined;
}

/** How long a stop may take before it counts as failed: above the daemon's own bounded stop (backends 5 s, runs 3 s). */
export const DAEMON_STOP_WAIT_MS = 30_000;
const POLL_MS = 100;

/** The daemon answering on the control socket (its pid and version), or undefined when none runs. */
export async function runningDaemon(deps: DaemonControlDeps): Promise<RunningDaemon | undefined> {
	try {
		const { status } = await ipcRequest(
			{ socket: deps.paths.socket, clock: deps.clock, signal: deps.signal },
			{ type: "status" },
		);
		return { pid: status.pid, version: status.version, service: status.service };
	} catch (error) {
		if (error instanceof CliError && error.code === "daemon-not-running") return undefined;
		throw error;
	}
}

/** Asks the daemon to stop over its socket and waits for its process to end; whether it did. */
export async function stopThroughSocket(deps: DaemonControlDeps, daemon: RunningDaemon): Promise<boolean> {
	try {
		await ipcRequest({ socket: deps.paths.socket, clock: deps.clock, signal: deps.signal }, { type: "stop" });
	} catch (error) {
		// Gone between the two requests: that is what was wanted.
		if (!(error instanceof CliError && error.code === "daemon-not-running")) throw error;
	}
	return waitForExit(deps, daemon.pid);
}

/**
 * Writes <state>/stop-request, which every daemon looks for each second, and waits for the daemon's process to end;
 * whether it did. The daemon deletes the file when it sees it; one left behind (it had died) is removed here.
 */
export async function stopThroughFile(deps: DaemonControlDeps, daemon: RunningDaemon): Promise<boolean> {
	const file = deps.paths.stopRequestFile;
	deps.files.write(file, `${JSON.stringify({ pid: daemon.pid })}\n`, 0o600);
	try {
		return await waitForExit(deps, daemon.pid);
	} finally {
		deps.files.remove(file);
	}
}

/** Waits (on the injected clock, bounded) for a process to end; whether it did. */
export async function waitForExit(
	deps: Pick<DaemonControlDeps, "clock" | "signal">,
	pid: number,
	limitMs = DAEMON_STOP_WAIT_MS,
): Promise<boolean> {
	const deadline = deps.clock.now() + limitMs;
	while (isAlive({ pid })) {
		if (deps.clock.now() >= deadline) return false;
		await deps.clock.sleep(POLL_MS, deps.signal);
	}
	return true;
}
