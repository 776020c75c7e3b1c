// The machine's processes as stopping and freezing a scope need them (parent, group, session, state, start time):
// from /proc on Linux, where a process's environment can be read too, and from `ps` elsewhere on POSIX.
import { readdirSync, readFileSync } from "node:fs";
import type { Platform } from "../local/paths";

export interface ProcessInfo {
	pid: number;
	ppid: number;
	/** The process group. */
	pgid: number;
	/** The session; NaN where `ps` does not give it (macOS). */
	sid: number;
	/** One letter: R, S, D, T (stopped), t (traced), Z (zombie), X (dead), I, ... */
	state: string;
	/** Clock ticks since boot (Linux); NaN elsewhere. */
	startTime: number;
}

/** An exited process only waiting to be reaped (a container's PID 1 may never do it) is gone. */
export function isGone(state: string): boolean {
	return state === "Z" || state === "X";
}

/** A stopped process (SIGSTOP): `T`, or `t` when traced. */
export function isStopped(state: string): boolean {
	return state === "T" || state === "t";
}

/**
 * Whether a SIGSTOP waits to be taken (Linux: /proc/<pid>/status, the thread's or the process's pending set). A
 * process in uninterruptible sleep takes it only when it wakes, and then stops before it runs anything: a shell
 * waiting on a vfork child that was stopped before its exec sleeps so until that child goes on.
 */
export function stopPending(pid: number): boolean {
	let text: string;
	try {
		text = readFileSync(`/proc/${pid}/status`, "utf8");
	} catch {
		return false;
	}
	const SIGSTOP_BIT = 1n << 18n; // signal 19
	return [...text.matchAll(/^(?:SigPnd|ShdPnd):\s*([0-9a-f]+)$/gm)].some(
		(m) => (BigInt(`0x${m[1]}`) & SIGSTOP_BIT) !== 0n,
	);
}

/** Every process now, or undefined where there is no way to list them (Windows). */
export function readProcessTable(platform: Platform): ProcessInfo[] | undefined {
	if (platform === "win32") return undefined;
	if (platform === "linux") return readProc();
	return readPs();
}

/** One process's entry (Linux), or undefined once it is gone (reaped). */
export function readProcess(pid: number): ProcessInfo | undefined {
	let text: string;
	try {
		text = readFileSync(`/proc/${pid}/stat`, "utf8");
	} catch {
		return undefined;
	}
	return parseStat(pid, text);
}

/**
 * A line of /proc/<pid>/stat. The command name (field 2) is in parentheses and may hold spaces or
 * ")", so fields are counted from the last ")": state, ppid, pgrp, session, ... starttime (22).
 */
export function parseStat(pid: number, text: string): ProcessInfo | undefined {
	const close = text.lastIndexOf(")");
	if (close < 0) return undefined;
	const fields = text
		.slice(close + 2)
		.trim()
		.split(" ");
	if (fields.length < 20) return undefined;
	return {
		pid,
		state: fields[0]!,
		ppid: Number(fields[1]),
		pgid: Number(fields[2]),
		sid: Number(fields[3]),
		startTime: Number(fields[19]),
	};
}

function readProc(): ProcessInfo[] {
	let entries: string[];
	try {
		entries = readdirSync("/proc");
	} catch {
		return [];
	}
	const out: ProcessInfo[] = [];
	for (const entry of entries) {
		const code = entry.charCodeAt(0);
		if (code < 48 || code > 57) continue;
		const info = readProcess(Number(entry));
		if (info) out.push(info);
	}
	return out;
}

/** `ps -A -o pid=,ppid=,pgid=,stat=` (POSIX): no session or start time, which the group mode does without. */
function readPs(): ProcessInfo[] {
	const result = Bun.spawnSync(["ps", "-A", "-o", "pid=,ppid=,pgid=,stat="], {
		stdout: "pipe",
		stderr: "ignore",
	});
	if (result.exitCode !== 0) return [];
	return parsePs(result.stdout.toString());
}

export function parsePs(text: string): ProcessInfo[] {
	const out: ProcessInfo[] = [];
	for (const line of text.split("\n")) {
		const [pid, ppid, pgid, stat] = line.trim().split(/\s+/);
		if (!pid || !stat) continue;
		out.push({
			pid: Number(pid),
			ppid: Number(ppid),
			pgid: Number(pgid),
			sid: Number.NaN,
			state: stat[0]!,
			startTime: Number.NaN,
		});
	}
	return out;
}

/**
 * Whether the process's environment (as it was at its exec, /proc/<pid>/environ) holds exactly
 * this `NAME=value` entry. False when it cannot be read: another user's, a zombie's, or no /proc.
 */
export function hasEnvironmentEntry(pid: number, entry: string): boolean {
	let text: string;
	try {
		text = readFileSync(`/proc/${pid}/environ`, "latin1");
	} catch {
		return false;
	}
	return text.startsWith(`${entry}\0`) || text.includes(`\0${entry}\0`) || text === entry;
}

/** The process's pid inside its own PID namespace (1 for a namespace's init), from /proc/<pid>/status. */
export function namespacePid(pid: number): number | undefined {
	let text: string;
	try {
		text = readFileSync(`/proc/${pid}/status`, "utf8");
	} catch {
		return undefined;
	}
	const line = /^NSpid:\s*(.*)$/m.exec(text)?.[1];
	const last = line?.trim().split(/\s+/).at(-1);
	return last === undefined ? undefined : Number(last);
}
