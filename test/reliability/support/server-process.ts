// The server as its own process (`bun apps/server/src/main.ts`) on a SQLite file in its data dir, or on PostgreSQL
// with DATABASE_URL in env (github-server.ts makes a fresh schema), for kill -9: started on a free loopback port (then
// again on the same port, data dir and database), its JSON log lines read as they come, waited on by match.
import { Database } from "bun:sqlite";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import type { Subprocess } from "bun";

const MAIN = join(import.meta.dir, "..", "..", "..", "apps", "server", "src", "main.ts");

export interface ServerProcess {
	readonly url: string;
	readonly port: number;
	readonly pid: number;
	/** Every JSON log line so far. */
	readonly logs: Record<string, unknown>[];
	/** Resolves with the first log line that matches, once written (fails if the process ends first). */
	waitFor(match: (line: Record<string, unknown>) => boolean, what: string): Promise<Record<string, unknown>>;
	/** kill -9, and waits for it to be gone. */
	kill9(): Promise<void>;
	/** SIGTERM (a clean stop), and waits; SIGKILL after 10 s. */
	stop(): Promise<void>;
}

const live = new Set<Subprocess>();

/** A loopback port nothing listens on now, so PUBLIC_URL can name it before the server starts. */
export async function freePort(): Promise<number> {
	const server = createServer();
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
	const { port } = server.address() as AddressInfo;
	await new Promise<void>((resolve) => server.close(() => resolve()));
	return port;
}

/** Spawns the server on port (the same one to restart it); resolves once it says where it runs. */
export async function startServerProcess(options: {
	dataDir: string;
	env: Record<string, string>;
	port: number;
}): Promise<ServerProcess> {
	const child = spawnServer(options);
	const logs: Record<string, unknown>[] = [];
	const waiters = new Set<() => void>();
	let stdout = "";
	let ended = false;
	const pump = async (stream: ReadableStream<Uint8Array>) => {
		const decoder = new TextDecoder();
		let partial = "";
		for await (const chunk of stream) {
			const text = partial + decoder.decode(chunk, { stream: true });
			const lines = text.split("\n");
			partial = lines.pop() ?? "";
			for (const line of lines) {
				if (line.startsWith("{")) logs.push(JSON.parse(line) as Record<string, unknown>);
				else stdout += `${line}\n`;
			}
			for (const waiter of [...waiters]) waiter();
		}
	};
	const pumped = Promise.all([pump(child.stdout), pump(child.stderr)]);
	void child.exited.then(async () => {
		await pumped;
		ended = true;
		live.delete(child);
		for (const waiter of [...waiters]) waiter();
	});
	const wait = <T>(check: () => T | undefined, what: string): Promise<T> =>
		new Promise((resolve, reject) => {
			const timer = setTimeout(() => done(new Error(`gave up waiting for ${what}`)), 20_000);
			const done = (error?: Error, value?: T) => {
				clearTimeout(timer);
				waiters.delete(poll);
				if (error) reject(error);
				else resolve(value as T);
			};
			const poll = () => {
				const value = check();
				if (value !== undefined) done(undefined, value);
				else if (ended) done(new Error(`the server exited before ${what}:\n${stdout}`));
			};
			waiters.add(poll);
			poll();
		});
	const running = await wait(() => /Chopin is running at (\S+)/.exec(stdout) ?? undefined, "it to listen");
	const url = running[1]!;
	return {
		url,
		port: Number(new URL(url).port),
		pid: child.pid,
		logs,
		waitFor: (match, what) => wait(() => logs.find(match), what),
		async kill9() {
			child.kill("SIGKILL");
			await child.exited;
		},
		async stop() {
			child.kill("SIGTERM");
			const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
			await child.exited;
			clearTimeout(timer);
		},
	};
}

/** The process alone, for a kill at a moment of the test's choosing (mid-migration: before it listens). */
export function spawnServer(options: {
	dataDir: string;
	env: Record<string, string>;
	port: number;
}): Subprocess<"ignore", "pipe", "pipe"> {
	const child = Bun.spawn([process.execPath, MAIN], {
		cwd: options.dataDir,
		env: {
			PATH: process.env.PATH ?? "",
			HOME: options.dataDir,
			HOST: "127.0.0.1",
			PORT: String(options.port),
			PUBLIC_URL: `http://127.0.0.1:${options.port}`,
			DATA_DIR: options.dataDir,
			LOG_LEVEL: "debug",
			...options.env,
		},
		stdin: "ignore",
		stdout: "pipe",
		stderr: "pipe",
	});
	live.add(child);
	return child;
}

/** SIGKILLs every server process a test left (for afterEach/afterAll). */
export async function killServerProcesses(): Promise<void> {
	const all = [...live];
	for (const child of all) child.kill("SIGKILL");
	await Promise.all(all.map((child) => child.exited));
	live.clear();
}

/** Opens the server's SQLite file read-only: `PRAGMA integrity_check` and the rows a test expects. */
export function inspectStore<T>(dataDir: string, read: (db: Database) => T): T {
	const db = new Database(join(dataDir, "chopin.db"), { readonly: true });
	try {
		return read(db);
	} finally {
		db.close();
	}
}

/** `ok`, or what SQLite found wrong. */
export function integrity(db: Database): string {
	return (db.query("PRAGMA integrity_check").all() as { integrity_check: string }[])
		.map((r) => r.integrity_check)
		.join("; ");
}
