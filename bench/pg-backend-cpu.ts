/**
 * The CPU time of the PostgreSQL backends serving this process's connections, for benches whose server runs in
 * this process against a PostgreSQL on the same machine: PostgreSQL does its part of every statement in its own
 * processes, which the process's own cpuUsage() does not see and which compete for the same cores. Finds them by
 * this process's TCP connections to the server (ss) and pg_stat_activity's client ports; reads each backend's time
 * on CPU from /proc/<pid>/schedstat (nanoseconds). Linux only, and the backends must be readable (same user or
 * root).
 */
import type { Store } from "../apps/server/src/store/store";

/**
 * Microseconds on CPU so far, summed over the backends of this process's connections to `port`; NaN where it
 * cannot be read (no `ss`, no /proc: not Linux), so the bench still runs and prints NaN.
 */
export async function pgBackendCpuMicros(store: Store, port = 5432): Promise<number> {
	let ss: ReturnType<typeof Bun.spawnSync>;
	try {
		ss = Bun.spawnSync(["ss", "-tnpH", "state", "established", `( dport = :${port} )`]);
	} catch {
		return Number.NaN;
	}
	if (!ss.success || !ss.stdout) return Number.NaN;
	const ports: number[] = [];
	for (const line of ss.stdout.toString().split("\n")) {
		if (!line.includes(`pid=${process.pid},`)) continue;
		const local = line.trim().split(/\s+/)[2] ?? "";
		ports.push(Number(local.slice(local.lastIndexOf(":") + 1)));
	}
	if (ports.length === 0) return 0;
	const rows =
		(await store.sql`SELECT pid FROM pg_stat_activity WHERE client_port IN ${store.sql(ports)}`) as {
			pid: number;
		}[];
	let nanos = 0;
	for (const { pid } of rows) {
		try {
			nanos += Number((await Bun.file(`/proc/${pid}/schedstat`).text()).split(" ")[0]);
		} catch (error) {
			// The backend ended between the query and the read (its time is gone with it), or there is no /proc.
			if (
				(error as NodeJS.ErrnoException).code !== "ENOENT" ||
				!(await Bun.file("/proc/self/schedstat").exists())
			)
				return Number.NaN;
		}
	}
	return nanos / 1000;
}
