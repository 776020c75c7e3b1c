/**
 * A reconnect storm: N paired machines (default 1,000) hold the control channel of a real server
 * running in a child process; the server restarts (SIGTERM, then started again on the same port
 * and data, as a deploy does), and every machine follows the CLI's rule: `restarting` and 1012 →
 * reconnect at once; a failed attempt → 1, 2, 5, 10, 20, 30 s (20% jitter), then every minute.
 * Prints the time until all are back, attempts per machine, errors, and that none was paired
 * again (every welcome names the machine's own id). Target: all back within 35 s, zero errors.
 * Not a test: it prints its figures.
 *
 *   bun bench/reconnect-storm.ts [machines, default 1000]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { credentialDigest, newMachineCredential } from "../apps/server/src/machines/credentials";
import { migrate } from "../apps/server/src/store/migrate";
import { openStore } from "../apps/server/src/store/store";
import { reconnectBackoff } from "../packages/agent-link/src/backoff";
import {
	encodeMachineClientMessage,
	formatClientHeader,
	MACHINE_PATH,
	MACHINE_SUBPROTOCOL,
	parseMachineServerFrame,
} from "../packages/agent-link/src/machine/index";

const COUNT = Number(process.argv[2] ?? 1_000);
const root = join(import.meta.dir, "..");
const dataDir = mkdtempSync(join(tmpdir(), "chopin-storm-"));
const port = await freePort();
const serverUrl = `ws://127.0.0.1:${port}${MACHINE_PATH}`;
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

/** One simulated machine: the CLI's connection loop, counting attempts and anything unexpected. */
class Machine {
	ws: WebSocket | undefined;
	attempts = 0;
	welcomed = false;
	readonly errors: string[] = [];
	readonly #backoff = reconnectBackoff();
	#stopped = false;
	#timer: ReturnType<typeof setTimeout> | undefined;
	#onWelcome: (() => void) | undefined;

	constructor(
		readonly id: string,
		readonly credential: string,
	) {}

	/** Resolves at the next welcome. */
	welcome(): Promise<void> {
		return new Promise((resolve) => {
			this.#onWelcome = resolve;
		});
	}

	connect(): void {
		if (this.#stopped) return;
		this.attempts += 1;
		let opened = false;
		const ws = new WebSocket(serverUrl, {
			protocols: [MACHINE_SUBPROTOCOL],
			headers: { authorization: `Bearer ${this.credential}`, "chopin-client": CLIENT },
		} as unknown as string[]);
		this.ws = ws;
		ws.onopen = () => {
			opened = true;
			ws.send(
				encodeMachineClientMessage({
					type: "hello",
					version: 1,
					checkouts: [{ path: "/src/repo", repository: "storm/repo" }],
					runs: [],
					planners: [],
					sandbox: { kind: "none" },
				}),
			);
		};
		ws.onmessage = (event) => {
			const parsed = parseMachineServerFrame(String(event.data));
			if (!parsed.ok) return void this.errors.push(`bad frame: ${parsed.error.message}`);
			const message = parsed.message;
			if (message.type === "welcome") {
				if (message.machine.id !== this.id) this.errors.push(`welcomed as ${message.machine.id}`);
				this.welcomed = true;
				this.#backoff.reset();
				this.#onWelcome?.();
			} else if (message.type === "revoked" || message.type === "error") {
				this.errors.push(`${message.type} ${message.code}`);
			}
		};
		ws.onerror = (event) => {
			// A refused upgrade (401, 426...) is an error; a refused connection is the server being away.
			const text = String((event as ErrorEvent).message ?? "");
			if (/status code/i.test(text)) this.errors.push(text);
		};
		ws.onclose = (event) => {
			if (this.#stopped || this.ws !== ws) return;
			this.welcomed = false;
			if (opened && event.code === 1012) return this.connect();
			if (opened) this.errors.push(`closed ${event.code} ${event.reason}`);
			this.#timer = setTimeout(() => this.connect(), this.#backoff.next());
		};
	}

	stop(): void {
		this.#stopped = true;
		clearTimeout(this.#timer);
		this.ws?.close(1000);
	}
}

async function freePort(): Promise<number> {
	const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
	const found = probe.port!;
	await probe.stop(true);
	return found;
}

async function seed(): Promise<Machine[]> {
	const store = await openStore({ url: `sqlite://${join(dataDir, "chopin.db")}` });
	try {
		await migrate(store);
		const now = Date.now();
		await store.sql`INSERT INTO users ${store.sql({ login: "storm", created_at: now })}`;
		const machines: Machine[] = [];
		for (let from = 0; from < COUNT; from += 500) {
			const rows = [];
			const authorizations = [];
			for (let i = from; i < Math.min(COUNT, from + 500); i++) {
				const credential = newMachineCredential();
				const id = `mch_storm${String(i).padStart(8, "0")}`;
				machines.push(new Machine(id, credential));
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
		return machines;
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

function summary(values: number[]): string {
	const sorted = [...values].sort((a, b) => a - b);
	const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
	return `min ${sorted[0]}, p50 ${at(0.5)}, p99 ${at(0.99)}, max ${sorted.at(-1)}`;
}

const machines = await seed();
let server = await startServer();
try {
	const firstStart = performance.now();
	const first = Promise.all(machines.map((m) => m.welcome()));
	for (const m of machines) m.connect();
	await first;
	console.log(
		`${COUNT} machines connected and welcomed in ${((performance.now() - firstStart) / 1000).toFixed(2)} s`,
	);
	const before = machines.map((m) => m.attempts);

	const back = Promise.all(machines.map((m) => m.welcome()));
	const restartStart = performance.now();
	server.kill("SIGTERM");
	await server.exited;
	const stopped = performance.now();
	server = await startServer();
	const started = performance.now();
	const timeout = setTimeout(() => {
		const missing = machines.filter((m) => !m.welcomed).length;
		console.log(`not all back after 120 s: ${missing} missing`);
		process.exit(1);
	}, 120_000);
	await back;
	clearTimeout(timeout);
	const done = performance.now();
	const attempts = machines.map((m, i) => m.attempts - before[i]!);
	const errors = machines.flatMap((m) => m.errors);
	console.log(
		`restart: the old server stopped in ${((stopped - restartStart) / 1000).toFixed(2)} s, the new one listened after ${((started - restartStart) / 1000).toFixed(2)} s`,
	);
	console.log(
		`all ${COUNT} back ${((done - restartStart) / 1000).toFixed(2)} s after the restart began (target: 35 s)`,
	);
	console.log(`attempts per machine after the restart: ${summary(attempts)}`);
	console.log(`errors: ${errors.length}${errors.length ? ` (first: ${errors.slice(0, 3).join("; ")})` : ""}`);
	const repaired = machines.filter((m) => m.errors.some((e) => e.includes("welcomed as"))).length;
	console.log(`paired again: ${repaired} (every welcome named the machine's own id: ${repaired === 0})`);
} finally {
	for (const m of machines) m.stop();
	server.kill("SIGTERM");
	await server.exited;
	rmSync(dataDir, { recursive: true, force: true });
}
