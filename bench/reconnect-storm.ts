/**
 * A reconnect storm: N paired machines (default 1,000), each running the CLI's real control link (ControlLink with its
 * reconnect schedule and its reach probe, `ws` sockets, the real clock), plus a sample of real daemons (`chopin run`
 * processes, default 10: bench/storm-daemons.ts), hold the control channel of a real server running in a child
 * process; the server stops (SIGTERM: `restarting` and 1012 to every machine), stays down for the downtime given, and
 * starts again on the same port and data, as a deploy or an outage does. Prints what a person feels: the time from
 * the new server listening to each machine back (welcomed), p50/p99/max, for the links and for the daemons (as each
 * daemon's own `status` says, asked every 10 ms), the time until every one is back, attempts and reaches per machine,
 * errors, and that none was paired again (every welcome names the machine's own id). Target: all back within a few
 * seconds of the server listening, whatever the downtime, zero errors. Not a test: it prints its figures.
 *
 *   bun bench/reconnect-storm.ts [machines, default 1000] [downtime seconds, default 25] [daemons, default 10]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import type { ChannelOutcome } from "../apps/cli/src/daemon/channel";
import { ControlLink, type MachineState } from "../apps/cli/src/daemon/control-link";
import { httpReach } from "../apps/cli/src/daemon/reach";
import { CliError } from "../apps/cli/src/program/errors";
import { openWs } from "../apps/cli/src/testing/ws-open";
import { credentialDigest, newMachineCredential } from "../apps/server/src/machines/credentials";
import { migrate } from "../apps/server/src/store/migrate";
import { openStore } from "../apps/server/src/store/store";
import { reconnectBackoff } from "../packages/agent-link/src/backoff";
import { systemClock } from "../packages/agent-link/src/clock";
import { formatClientHeader } from "../packages/agent-link/src/machine/index";
import { StormDaemon } from "./storm-daemons";

const COUNT = Number(process.argv[2] ?? 1_000);
const DOWNTIME_MS = Number(process.argv[3] ?? 25) * 1_000;
const DAEMONS = Number(process.argv[4] ?? 10);
const GIVE_UP_MS = 180_000;
const root = join(import.meta.dir, "..");
const dataDir = mkdtempSync(join(tmpdir(), "chopin-storm-"));
const port = await freePort();
const origin = `http://127.0.0.1:${port}`;
const CLIENT = formatClientHeader({ version: "0.2.0", os: "linux", arch: "x64", install: "npm" });
const env = {
	...process.env,
	PORT: String(port),
	HOST: "127.0.0.1",
	DATA_DIR: dataDir,
	AUTH_MODE: "local",
	DEMO: "off",
	LOG_LEVEL: "warn",
	LOCAL_ACCOUNTS: JSON.stringify({
		users: [{ login: "storm" }],
		repositories: { "storm/repo": { storm: "admin" } },
	}),
};
const STATE: MachineState = {
	checkouts: [{ path: "/src/repo", repository: "storm/repo" }],
	runs: [],
	planners: [],
	sandbox: { kind: "none" },
	runner: { available: false, reason: "bench" },
};
const silent = { debug() {}, info() {}, warn() {}, error() {} } as never;
const clock = systemClock();

/** One machine: the CLI's control link, counting attempts, reaches and anything unexpected. */
class Machine {
	readonly link: ControlLink;
	attempts = 0;
	reaches = 0;
	welcomed = false;
	/** performance.now() of the last welcome. */
	welcomedAt = 0;
	readonly errors: string[] = [];
	/** What each attempt since the mark ended with, and each wait after it: the evidence for a machine not back. */
	history: string[] = [];
	#onWelcome: (() => void) | undefined;
	#running: Promise<void> | undefined;

	constructor(
		readonly id: string,
		credential: string,
	) {
		const reach = httpReach({ server: origin, fetch, clock, client: CLIENT });
		this.link = new ControlLink({
			server: origin,
			token: credential,
			client: CLIENT,
			open: openWs,
			clock,
			log: silent,
			backoff: reconnectBackoff(),
			state: () => STATE,
			finalError: (code, message) => new CliError("unexpected", `${code}: ${message}`),
			reach: (signal) => {
				this.reaches += 1;
				return reach(signal);
			},
			onEvent: (event) => {
				if (event.type === "attempt") this.attempts += 1;
				if (event.type === "waiting") this.history.push(`wait ${event.delayMs} ms (${event.why})`);
				if (event.type === "connected") {
					if (event.welcome.machine.id !== this.id)
						this.errors.push(`welcomed as ${event.welcome.machine.id}`);
					this.welcomed = true;
					this.welcomedAt = performance.now();
					this.#onWelcome?.();
				}
				if (event.type === "ended") {
					this.welcomed = false;
					const o = event.outcome;
					this.history.push(outcomeWord(o));
					if (o.kind === "refused" && o.status !== 503)
						this.errors.push(`refused ${o.status} ${o.body?.code}`);
					if (o.kind === "closed" && ![1000, 1001, 1006, 1012].includes(o.code))
						this.errors.push(`closed ${o.code}`);
				}
			},
		});
	}

	/** Resolves at the next welcome. */
	welcome(): Promise<void> {
		return new Promise((resolve) => {
			this.#onWelcome = resolve;
		});
	}

	start(): void {
		this.#running = this.link.run().catch((error) => void this.errors.push(String(error)));
	}

	async stop(): Promise<void> {
		await this.link.stop();
		await this.#running;
	}
}

/** One attempt's end in a few words: what kind, and the status, reason or close code. */
function outcomeWord(o: ChannelOutcome): string {
	if (o.kind === "refused")
		return `refused ${o.status} ${o.body?.code ?? ""} retryAfter ${o.body?.retryAfter ?? "-"}`;
	if (o.kind === "failed") return `failed (${o.reason})`;
	if (o.kind === "closed") return `closed ${o.code}${o.silent ? " silent" : ""}`;
	return `ended (${o.why})`;
}

/** The links not back: their state, when their next attempt is due, and how often each kind of history occurs. */
function diagnose(missing: Machine[]): void {
	const now = clock.now();
	const states = new Map<string, number>();
	const kinds = new Map<string, number>();
	for (const m of missing) {
		const s = m.link.snapshot();
		const due = s.nextAttemptAt === undefined ? "-" : `${Math.round((s.nextAttemptAt - now) / 1000)} s`;
		const key = `${s.state}, next attempt in ${due}`;
		states.set(key, (states.get(key) ?? 0) + 1);
		for (const h of m.history) {
			const k = h.replace(/\d+ ms/, "N ms").replace(/retryAfter \d+/, "retryAfter N");
			kinds.set(k, (kinds.get(k) ?? 0) + 1);
		}
	}
	console.log(`  ${missing.length} links not back; their states:`);
	for (const [k, n] of [...states].sort((a, b) => b[1] - a[1]).slice(0, 10)) console.log(`    ${n} × ${k}`);
	console.log("  what their attempts ended with, and their waits (counts over all of them):");
	for (const [k, n] of [...kinds].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`    ${n} × ${k}`);
	for (const m of missing.slice(0, 3)) console.log(`  e.g. ${m.id}: ${m.history.join(" → ")}`);
}

/**
 * Gives up after GIVE_UP_MS, saying which links are missing and why (then the finally stops every daemon and the
 * server): a storm that never ends is a figure too.
 */
async function within<T>(waiting: Promise<T>, what: string): Promise<T> {
	let timeout: ReturnType<typeof setTimeout> | undefined;
	const gaveUp = new Promise<never>((_, reject) => {
		timeout = setTimeout(() => {
			const missing = machines.filter((m) => !m.welcomed);
			diagnose(missing);
			reject(new Error(`not all ${what} after ${GIVE_UP_MS / 1000} s: ${missing.length} links missing`));
		}, GIVE_UP_MS);
	});
	try {
		return await Promise.race([waiting, gaveUp]);
	} finally {
		clearTimeout(timeout);
	}
}

async function freePort(): Promise<number> {
	const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
	const found = probe.port!;
	await probe.stop(true);
	return found;
}

async function seed(): Promise<{ machines: Machine[]; daemons: StormDaemon[] }> {
	const store = await openStore({ url: `sqlite://${join(dataDir, "chopin.db")}` });
	try {
		await migrate(store);
		const now = Date.now();
		await store.sql`INSERT INTO users ${store.sql({ login: "storm", created_at: now })}`;
		const machines: Machine[] = [];
		const daemons: StormDaemon[] = [];
		const total = COUNT + DAEMONS;
		for (let from = 0; from < total; from += 500) {
			const rows = [];
			const authorizations = [];
			for (let i = from; i < Math.min(total, from + 500); i++) {
				const credential = newMachineCredential();
				const id = `mch_storm${String(i).padStart(8, "0")}`;
				// The last DAEMONS machines are real `chopin run` processes; the others, links in this process.
				if (i < COUNT) machines.push(new Machine(id, credential));
				else daemons.push(await StormDaemon.create(id, credential, origin, "storm/repo"));
				rows.push({
					id,
					owner: "storm",
					label: `machine ${i}`,
					client_version: "0.2.0",
					client_os: "linux",
					client_arch: "x64",
					client_install: "npm",
					auto_run: 0,
					credential_digest: credentialDigest(credential),
					created_at: now,
					last_contact_at: now,
				});
				authorizations.push({ machine_id: id, kind: "local", login: "storm", updated_at: now });
			}
			await store.sql`INSERT INTO machines ${store.sql(rows)}`;
			await store.sql`INSERT INTO machine_authorizations ${store.sql(authorizations)}`;
		}
		return { machines, daemons };
	} finally {
		await store.close();
	}
}

async function startServer(): Promise<Subprocess> {
	const child = Bun.spawn(["bun", join(root, "apps/server/src/main.ts")], {
		env,
		stdout: "pipe",
		stderr: "inherit",
	});
	const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
	let text = "";
	while (!text.includes("Chopin is running")) {
		const { value, done } = await reader.read();
		if (done) throw new Error(`the server exited: ${text}`);
		text += new TextDecoder().decode(value);
	}
	reader.releaseLock();
	return child;
}

function summary(values: number[], unit = ""): string {
	const sorted = [...values].sort((a, b) => a - b);
	const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
	const f = (v: number | undefined) => (unit ? `${Math.round(v ?? Number.NaN)} ${unit}` : String(v));
	return `min ${f(sorted[0])}, p50 ${f(at(0.5))}, p99 ${f(at(0.99))}, max ${f(sorted.at(-1))}`;
}

const { machines, daemons } = await seed();
let server = await startServer();
try {
	const firstStart = performance.now();
	const first = Promise.all(machines.map((m) => m.welcome()));
	for (const m of machines) m.start();
	await within(first, "connected the first time");
	console.log(
		`${COUNT} machines connected and welcomed in ${((performance.now() - firstStart) / 1000).toFixed(2)} s`,
	);
	for (const d of daemons) d.start();
	await Promise.all(daemons.map((d) => d.until(true)));
	console.log(`${DAEMONS} daemons connected`);
	const before = machines.map((m) => ({ attempts: m.attempts, reaches: m.reaches }));
	for (const m of machines) m.history = [];

	const back = Promise.all(machines.map((m) => m.welcome()));
	server.kill("SIGTERM");
	await server.exited;
	const stopped = performance.now();
	// Each daemon must have seen the channel go before its return is timed.
	await Promise.all([Bun.sleep(DOWNTIME_MS), ...daemons.map((d) => d.until(false))]);
	const daemonsBack = daemons.map((d) => d.until(true));
	for (const waiting of daemonsBack) waiting.catch(() => {}); // what is given up on is said below
	server = await startServer();
	const listening = performance.now();
	const daemonTimes = await within(
		back.then(() => Promise.all(daemonsBack)).then((ats) => ats.map((at) => at - listening)),
		"back",
	);
	const linkTimes = machines.map((m) => m.welcomedAt - listening);
	const attempts = machines.map((m, i) => m.attempts - before[i]!.attempts);
	const reaches = machines.map((m, i) => m.reaches - before[i]!.reaches);
	const errors = machines.flatMap((m) => m.errors);
	console.log(
		`the server was down ${((listening - stopped) / 1000).toFixed(1)} s (asked for ${DOWNTIME_MS / 1000} s, plus its start)`,
	);
	const last = Math.max(...linkTimes, ...daemonTimes);
	console.log(
		`all ${COUNT} links and ${DAEMONS} daemons back ${(last / 1000).toFixed(2)} s after the new server listened (target: a few seconds, whatever the downtime)`,
	);
	console.log(`  links, from listening to welcomed: ${summary(linkTimes, "ms")}`);
	if (DAEMONS) console.log(`  daemons, from listening to connected: ${summary(daemonTimes, "ms")}`);
	console.log(`attempts per machine while it was away: ${summary(attempts)}`);
	console.log(
		`reaches per machine while it was away: ${summary(reaches)} (${(reaches.reduce((a, b) => a + b, 0) / COUNT / Math.max(1, (listening - stopped) / 1000)).toFixed(2)} per machine per second)`,
	);
	console.log(`errors: ${errors.length}${errors.length ? ` (first: ${errors.slice(0, 3).join("; ")})` : ""}`);
	const busy = machines.map((m) => m.history.filter((h) => h.startsWith("refused 503")).length);
	const timedOut = machines.map((m) => m.history.filter((h) => h.startsWith("failed (no ")).length);
	console.log(
		`503 server-busy refusals: ${busy.reduce((a, b) => a + b, 0)} to ${busy.filter((n) => n > 0).length} links; handshake timeouts: ${timedOut.reduce((a, b) => a + b, 0)} to ${timedOut.filter((n) => n > 0).length} links`,
	);
	const kinds = new Map<string, number>();
	for (const h of machines.flatMap((m) => m.history)) {
		const k = h.replace(/\d+ ms/, "N ms").replace(/retryAfter \d+/, "retryAfter N");
		kinds.set(k, (kinds.get(k) ?? 0) + 1);
	}
	console.log(
		`what the links' attempts ended with while they were away, and their waits: ${[...kinds]
			.sort((a, b) => b[1] - a[1])
			.map(([k, n]) => `${n} × ${k}`)
			.join("; ")}`,
	);
	const repaired = machines.filter((m) => m.errors.some((e) => e.includes("welcomed as"))).length;
	console.log(`paired again: ${repaired} (every welcome named the machine's own id: ${repaired === 0})`);
} finally {
	await Promise.all(machines.map((m) => m.stop()));
	await Promise.all(daemons.map((d) => d.stop()));
	server.kill("SIGTERM");
	await server.exited;
	rmSync(dataDir, { recursive: true, force: true });
}
