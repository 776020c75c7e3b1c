// The process groups of the backends running now, so a daemon that must exit at once (a second Ctrl-C, a crash)
// still takes them along with SIGKILL instead of leaving them orphaned. Tiny on purpose: process-main.ts loads it for every command.

const live = new Set<number>();

/** A backend's group started (its leader's pid is the group id). */
export function addLiveGroup(pgid: number): void {
	live.add(pgid);
}

/** The group is gone (stopped, or found empty). */
export function removeLiveGroup(pgid: number): void {
	live.delete(pgid);
}

/** SIGKILL to every group still recorded; synchronous, so it can run in an `exit` handler. */
export function killLiveGroups(platform: NodeJS.Platform = process.platform): number {
	let killed = 0;
	for (const pgid of live) {
		try {
			if (platform === "win32") {
				Bun.spawnSync(["taskkill", "/T", "/F", "/PID", String(pgid)], { stdout: "ignore", stderr: "ignore" });
			} else {
				process.kill(-pgid, "SIGKILL");
			}
			killed++;
		} catch {
			// Already gone.
		}
	}
	live.clear();
	return killed;
}
