// Which processes belong to a scope right now, and signals to them: its leader, its process group and session, the
// CHOPIN_SCOPE mark in a process's environment (Linux), and the descendants of all of these by parent.
import type { Platform } from "../local/paths";
import type { ContainmentMode } from "./containment";
import {
	hasEnvironmentEntry,
	isGone,
	namespacePid,
	type ProcessInfo,
	readProcessTable,
} from "./process-table";

/** The variable every process of a scope carries: it finds those that left the group. */
export const SCOPE_VARIABLE = "CHOPIN_SCOPE";

export interface ScopeIdentity {
	id: string;
	/** The pid Bun spawned (bwrap in the pid-namespace mode); it leads the scope's group and session. */
	leader: number;
	/** The leader's start time in clock ticks (Linux): nothing older belongs to the scope. */
	leaderStart: number;
	platform: Platform;
	mode: ContainmentMode;
	/** The leader has exited (and been reaped by Bun): its pid is no member, whoever has it now. */
	leaderGone(): boolean;
}

export interface ScopeMember extends ProcessInfo {
	/**
	 * bubblewrap's own processes in the pid-namespace mode (the leader, and the namespace's init):
	 * SIGTERM would kill the leader at once and the namespace with it (and the init ignores it), so
	 * the grace goes to the others.
	 */
	wrapper: boolean;
}

/** The scope's live processes (zombies are gone), its leader first when alive. */
export function findMembers(scope: ScopeIdentity): ScopeMember[] {
	const table = readProcessTable(scope.platform);
	if (!table) return windowsLeader(scope);
	const self = process.pid;
	const candidates = table.filter(
		(p) =>
			p.pid !== self &&
			(Number.isNaN(scope.leaderStart) || Number.isNaN(p.startTime) || p.startTime >= scope.leaderStart),
	);
	const children = new Map<number, ProcessInfo[]>();
	for (const p of candidates) {
		const list = children.get(p.ppid);
		if (list) list.push(p);
		else children.set(p.ppid, [p]);
	}
	const found = new Map<number, ProcessInfo>();
	const add = (seed: ProcessInfo) => {
		const pending = [seed];
		while (pending.length > 0) {
			const p = pending.pop()!;
			if (found.has(p.pid)) continue;
			found.set(p.pid, p);
			pending.push(...(children.get(p.pid) ?? []));
		}
	};
	const leaderGone = scope.leaderGone();
	for (const p of candidates) {
		if ((p.pid === scope.leader && !leaderGone) || p.pgid === scope.leader || p.sid === scope.leader) add(p);
	}
	if (scope.platform === "linux") {
		const mark = `${SCOPE_VARIABLE}=${scope.id}`;
		for (const p of candidates) {
			if (!found.has(p.pid) && !isGone(p.state) && hasEnvironmentEntry(p.pid, mark)) add(p);
		}
	}
	const members: ScopeMember[] = [];
	for (const p of found.values()) {
		if (isGone(p.state)) continue;
		members.push({ ...p, wrapper: isWrapper(scope, p) });
	}
	return members.sort((a, b) => (a.pid === scope.leader ? -1 : b.pid === scope.leader ? 1 : a.pid - b.pid));
}

/**
 * bwrap, or a PID namespace's init: from outside its namespace an init gets only the signals it
 * handles (bwrap handles none), so SIGTERM would do nothing but leave it to the grace period.
 */
function isWrapper(scope: ScopeIdentity, p: ProcessInfo): boolean {
	if (scope.mode !== "pid-namespace") return false;
	return p.pid === scope.leader || namespacePid(p.pid) === 1;
}

function windowsLeader(scope: ScopeIdentity): ScopeMember[] {
	if (scope.leaderGone() || !exists(scope.leader)) return [];
	return [
		{ pid: scope.leader, ppid: process.pid, pgid: NaN, sid: NaN, state: "R", startTime: NaN, wrapper: false },
	];
}

function exists(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === "EPERM";
	}
}

/** Sends a signal to one process; false when it is gone already. */
export function signalProcess(pid: number, signal: NodeJS.Signals): boolean {
	try {
		process.kill(pid, signal);
		return true;
	} catch {
		return false;
	}
}

/** Sends a signal to a whole process group; false when no process of it is left. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
	return signalProcess(-pgid, signal);
}

/**
 * SIGKILL to the scope's group and every member, scanning again while any is left (a process may
 * fork between a scan and its kill, and a killed one takes a moment to go). Synchronous and bounded
 * (about `rounds` times 10 ms), for the exit handler. Returns every pid it signalled.
 */
export function killMembersNow(scope: ScopeIdentity, rounds = 10): number[] {
	const killed = new Set<number>();
	signalGroup(scope.leader, "SIGKILL");
	for (let round = 0; round < rounds; round++) {
		const members = findMembers(scope);
		if (members.length === 0) break;
		for (const member of members) {
			signalProcess(member.pid, "SIGKILL");
			killed.add(member.pid);
		}
		Bun.sleepSync(10);
	}
	return [...killed];
}
