// Whether a recorded process id still names a live process: the basis for replacing stale locks and sockets.
import { readProcess } from "../processes/process-table";

export interface ProcessIdentity {
	pid: number;
	/**
	 * The process's start time in clock ticks since boot (Linux /proc/<pid>/stat field 22), when
	 * known. A recorded start time that no longer matches means the pid was reused by another
	 * process, so the recorded owner is gone.
	 */
	startTime?: string | undefined;
}

/** The identity of a process as it is now, with its start time where the platform shows it. */
export function identify(pid: number): ProcessIdentity {
	const stat = readProcStat(pid);
	return stat ? { pid, startTime: stat.startTime } : { pid };
}

/**
 * True when the process is running. `process.kill(pid, 0)` sends nothing: it only asks whether
 * the pid exists (EPERM means it exists but belongs to another user). A zombie has exited and
 * only waits for its parent to reap it (these containers' PID 1 never does), so it counts as gone.
 */
export function isAlive(owner: ProcessIdentity): boolean {
	if (!Number.isSafeInteger(owner.pid) || owner.pid <= 0) return false;
	try {
		process.kill(owner.pid, 0);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
	}
	const stat = readProcStat(owner.pid);
	if (!stat) return true; // no /proc (macOS, Windows): existence is all we can know
	if (stat.state === "Z" || stat.state === "X") return false;
	if (owner.startTime !== undefined && stat.startTime !== owner.startTime) return false;
	return true;
}

/** State and start time from /proc (Linux): the one parser of /proc/<pid>/stat is process-table.ts'. */
function readProcStat(pid: number): { state: string; startTime: string } | undefined {
	const info = readProcess(pid);
	return info && { state: info.state, startTime: String(info.startTime) };
}
