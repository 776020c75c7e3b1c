// The scopes running now, so a process that must exit at once (a second Ctrl-C, a crash) still ends everything they
// started, synchronously from its `exit` handler. Tiny on purpose: process-main.ts loads it for every command, and
// each scope brings its own way to kill itself.

/** Each live scope's synchronous SIGKILL of all it holds, by scope id. */
const live = new Map<string, () => void>();
/** What else must go on a hard exit (the subreaper's adopted orphans). */
const sweeps = new Set<() => void>();

/** A scope started: `kill` ends all of it at once (synchronously, no waiting). */
export function addLiveScope(id: string, kill: () => void): void {
	live.set(id, kill);
}

/** The scope is over (stopped, or found empty). */
export function removeLiveScope(id: string): void {
	live.delete(id);
}

/** Something to run after the scopes are killed on a hard exit (kept until the process ends). */
export function addExitSweep(sweep: () => void): void {
	sweeps.add(sweep);
}

/** Kills every scope still recorded, then runs the sweeps; synchronous, so it can run in an `exit` handler. */
export function killLiveScopes(): number {
	let killed = 0;
	for (const kill of live.values()) {
		try {
			kill();
			killed++;
		} catch {
			// Best effort: the process is exiting.
		}
	}
	live.clear();
	for (const sweep of sweeps) {
		try {
			sweep();
		} catch {
			// Best effort.
		}
	}
	return killed;
}
