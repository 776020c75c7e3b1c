// A Planner backend as a process group: started detached (its own group), its output handed on, and stopped
// with SIGTERM to the group then SIGKILL to whatever is left after the grace period (taskkill /T /F on Windows).
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import type { Clock } from "@chopin/agent-link/clock";
import type { Platform } from "../local/paths";
import { addLiveScope, removeLiveScope } from "./live-scopes";

/** How long a backend's group has between SIGTERM and SIGKILL (agent-connection.md: 5 seconds). */
export const STOP_GRACE_MS = 5_000;

export interface BackendExit {
	code: number | null;
	signal: string | null;
	/** The command could not be started at all (not found, not executable). */
	error?: string;
}

export interface GroupOptions {
	argv: readonly string[];
	cwd: string;
	env: Record<string, string>;
	platform: Platform;
	clock: Clock;
	onStdout(chunk: Uint8Array): void;
	onStderr(chunk: Uint8Array): void;
	graceMs?: number;
}

export interface BackendGroup {
	readonly pid: number | undefined;
	/** Resolves when the group's leader exits (others in its group may live on; stop() ends them). */
	readonly exited: Promise<BackendExit>;
	/** Resolves once its output pipes are closed too: every line has been handed on (a live grandchild holds them open). */
	readonly closed: Promise<void>;
	/** SIGTERM to the group, SIGKILL to what is left after the grace period; resolves once the group is gone. */
	stop(): Promise<void>;
}

/** The command that ends a process tree on Windows, where there are no process groups to signal. */
export function windowsKillArgv(pid: number): string[] {
	return ["taskkill", "/T", "/F", "/PID", String(pid)];
}

export function spawnGroup(options: GroupOptions): BackendGroup {
	const [command, ...args] = options.argv;
	if (!command) throw new Error("spawnGroup needs a command");
	const windows = options.platform === "win32";
	// detached: on POSIX the child calls setsid, so it leads a new process group we can signal as one.
	const child: ChildProcess = spawn(command, args, {
		cwd: options.cwd,
		env: options.env,
		detached: !windows,
		windowsHide: true,
		stdio: ["ignore", "pipe", "pipe"],
	});
	child.stdout?.on("data", (chunk: Uint8Array) => options.onStdout(chunk));
	child.stderr?.on("data", (chunk: Uint8Array) => options.onStderr(chunk));
	let leaderGone = false;
	const exited = new Promise<BackendExit>((resolve) => {
		child.once("error", (error) => {
			leaderGone = true;
			resolve({ code: null, signal: null, error: error.message });
		});
		child.once("exit", (code, signal) => {
			leaderGone = true;
			// Nothing of the group is left: forget it, so a pid used again later is never signalled.
			if (child.pid !== undefined && !windows && !groupAlive(child.pid))
				removeLiveScope(`group-${child.pid}`);
			resolve({ code, signal });
		});
	});
	const closed = new Promise<void>((resolve) => {
		child.once("close", () => resolve());
		child.once("error", () => resolve());
	});
	const pid = child.pid;
	const graceMs = options.graceMs ?? STOP_GRACE_MS;
	if (pid !== undefined)
		addLiveScope(`group-${pid}`, () => {
			if (windows) Bun.spawnSync(windowsKillArgv(pid), { stdio: ["ignore", "ignore", "ignore"] });
			else signalGroup(pid, "SIGKILL");
		});

	const stop = async (): Promise<void> => {
		if (pid === undefined) return;
		try {
			await stopGroup(pid);
		} finally {
			removeLiveScope(`group-${pid}`);
		}
	};
	const stopGroup = async (pid: number): Promise<void> => {
		if (windows) {
			if (leaderGone) return;
			await new Promise<void>((resolve) => {
				const [bin, ...rest] = windowsKillArgv(pid);
				spawn(bin!, rest, { stdio: "ignore", windowsHide: true })
					.once("close", () => resolve())
					.once("error", () => resolve());
			});
			await exited;
			return;
		}
		if (!groupAlive(pid)) return;
		signalGroup(pid, "SIGTERM");
		const controller = new AbortController();
		const gone = waitGroupGone(pid, controller.signal);
		const graceOver = options.clock.sleep(graceMs, controller.signal).then(
			() => "grace" as const,
			() => "gone" as const,
		);
		const first = await Promise.race([gone.then(() => "gone" as const), graceOver]);
		controller.abort();
		if (first === "grace") {
			signalGroup(pid, "SIGKILL");
			await waitGroupGone(pid);
		}
		await exited;
		await closed;
	};
	return { pid, exited, closed, stop };
}

/**
 * Whether any live process of the group is left. A zombie has exited and only waits to be reaped
 * (a container's PID 1 may never do it), so on Linux, where /proc shows each process's group and
 * state, zombies do not count; elsewhere signal 0 to the group is all there is to ask.
 */
export function groupAlive(pgid: number): boolean {
	try {
		process.kill(-pgid, 0);
	} catch (error) {
		// EPERM: it exists but belongs to someone else (cannot happen for our own children, but it is alive).
		if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
	}
	const members = liveMembers(pgid);
	return members === undefined || members > 0;
}

/** How many processes of the group are not zombies, or undefined without /proc. */
function liveMembers(pgid: number): number | undefined {
	let entries: string[];
	try {
		entries = readdirSync("/proc");
	} catch {
		return undefined;
	}
	let live = 0;
	for (const entry of entries) {
		if (!/^\d+$/.test(entry)) continue;
		let text: string;
		try {
			text = readFileSync(`/proc/${entry}/stat`, "utf8");
		} catch {
			continue;
		}
		// Fields after the command name (which may hold spaces or ")"): state, ppid, pgrp, ...
		const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
		if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") live++;
	}
	return live;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
	try {
		process.kill(-pgid, signal);
	} catch {
		// The group ended in between: nothing left to signal.
	}
}

/**
 * Resolves once no process of the group is left. The kernel says so only when asked, so this
 * asks on a short real-time poll; it is how the group's end is noticed, not a deadline.
 */
function waitGroupGone(pgid: number, signal?: AbortSignal): Promise<void> {
	return new Promise((resolve) => {
		const check = () => {
			if (signal?.aborted || !groupAlive(pgid)) return resolve();
			setTimeout(check, 20);
		};
		check();
	});
}
