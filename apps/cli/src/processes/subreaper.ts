// The daemon as a child subreaper (Linux without a working bubblewrap): a backend's orphans are re-parented to it
// rather than to init, so they stay found and are stopped with it. Bun never reaps such adopted orphans, and reaping
// a pid Bun spawned itself crashes Bun (ECHILD), so only pids known not to be Bun's own are ever waited for.
import { dlopen, FFIType, ptr } from "bun:ffi";
import { isGone, type ProcessInfo, readProcess, readProcessTable } from "./process-table";

const PR_SET_CHILD_SUBREAPER = 36;
const PR_GET_CHILD_SUBREAPER = 37;
const WNOHANG = 1;

interface Libc {
	prctl(option: number, a: bigint, b: bigint, c: bigint, d: bigint): number;
	waitpid(pid: number, status: Int32Array, options: number): number;
}

let libc: Libc | null | undefined;

/** libc through bun:ffi, loaded on first use; null where it cannot be (no glibc, no FFI). */
function loadLibc(): Libc | null {
	if (libc !== undefined) return libc;
	libc = null;
	try {
		const { symbols } = dlopen("libc.so.6", {
			prctl: {
				args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64],
				returns: FFIType.i32,
			},
			waitpid: { args: [FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
		});
		libc = {
			prctl: (option, a, b, c, d) => symbols.prctl(option, a, b, c, d) as number,
			waitpid: (pid, status, options) => symbols.waitpid(pid, status, options) as number,
		};
	} catch {
		// Not glibc (musl), or FFI unavailable: the subreaper mode is not.
	}
	return libc;
}

/** Makes this process a child subreaper (or stops it being one); true when the kernel agreed. */
export function setChildSubreaper(on: boolean): boolean {
	const lib = loadLibc();
	if (!lib) return false;
	return lib.prctl(PR_SET_CHILD_SUBREAPER, on ? 1n : 0n, 0n, 0n, 0n) === 0 && isChildSubreaper() === on;
}

/** Whether this process is a child subreaper now (asked of the kernel). */
export function isChildSubreaper(): boolean {
	const lib = loadLibc();
	if (!lib) return false;
	const out = new Int32Array(1);
	if (lib.prctl(PR_GET_CHILD_SUBREAPER, BigInt(ptr(out)), 0n, 0n, 0n) !== 0) return false;
	return out[0] === 1;
}

/** The pids Bun spawned for a scope and has not reported exited: never ours to wait for. */
const ownChildren = new Set<number>();

export function addOwnChild(pid: number): void {
	ownChildren.add(pid);
}

export function removeOwnChild(pid: number): void {
	ownChildren.delete(pid);
}

/**
 * Reaps the listed processes that have exited and are this process's children by adoption (a
 * member of a scope, never a pid Bun spawned). Returns the pids reaped.
 */
export function reapAdopted(pids: Iterable<number>): number[] {
	const lib = loadLibc();
	if (!lib) return [];
	const reaped: number[] = [];
	const status = new Int32Array(1);
	for (const pid of pids) {
		if (ownChildren.has(pid)) continue;
		const info = readProcess(pid);
		if (!info || info.ppid !== process.pid || !isGone(info.state)) continue;
		if (lib.waitpid(pid, status, WNOHANG) === pid) reaped.push(pid);
	}
	return reaped;
}

/**
 * The orphans this subreaper adopted: its children in another session that Bun did not spawn for a
 * scope (Bun's other children, git through execa, share this process's session). Live ones only.
 */
export function adoptedOrphans(
	table: readonly ProcessInfo[] = readProcessTable("linux") ?? [],
): ProcessInfo[] {
	const self = table.find((p) => p.pid === process.pid) ?? readProcess(process.pid);
	if (!self) return [];
	return table.filter(
		(p) => p.ppid === process.pid && p.sid !== self.sid && !ownChildren.has(p.pid) && !isGone(p.state),
	);
}

/**
 * SIGKILL to every adopted orphan, marked or not: what a scope could not claim (a process that left
 * its group and cleared its environment) goes when the daemon stops. Synchronous, for the exit handler.
 */
export function killAdoptedOrphans(): number[] {
	const killed: number[] = [];
	for (const orphan of adoptedOrphans()) {
		try {
			process.kill(orphan.pid, "SIGKILL");
			killed.push(orphan.pid);
		} catch {
			// Gone in between.
		}
	}
	return killed;
}
