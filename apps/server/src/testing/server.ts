// A real server for tests, on SQLite or PostgreSQL, that restarts on the same port and data (for reconnect tests).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Clock } from "@chopin/agent-link/clock";
import { type Env, loadConfig } from "../config";
import type { AppContext } from "../context";
import { readEnvFiles } from "../env-files";
import { createLogger } from "../log";
import { type RunningServer, type StartOverrides, startServer } from "../server";
import type { StoreKind } from "../store/store";
import { createTestDatabase, type TestDatabase } from "../store/testing";

export interface TestServerOptions {
	/** Which database (default sqlite). PostgreSQL gets a fresh schema, dropped by close(). */
	store?: StoreKind;
	/** Environment variables on top of the test defaults (PORT=0, HOST=127.0.0.1, a temp DATA_DIR). */
	env?: Env;
	/** Usually a ManualClock; kept across restarts. */
	clock?: Clock;
	/** Extra routes for the test. */
	register?: StartOverrides["register"];
	fetch?: typeof fetch;
}

export interface TestServer extends AsyncDisposable {
	/** http://127.0.0.1:<port>; the same after restart(). */
	readonly url: string;
	readonly port: number;
	/** The running server's context (a new one after each restart). */
	readonly context: AppContext;
	/** The router's fetch, without a socket. */
	fetch(req: Request): Promise<Response>;
	/** Every log line so far, parsed; set CHOPIN_TEST_LOGS=1 to see them on stderr too. */
	readonly logs: Record<string, unknown>[];
	/** The environment the server was started with (after the test defaults). */
	readonly env: Env;
	/**
	 * Stops and starts again on the same port, data dir and database, as a deploy does. whileDown runs between the
	 * stop and the start, its port free (a test binds there what a proxy answers meanwhile).
	 */
	restart(options?: { whileDown?: (port: number) => Promise<void> }): Promise<void>;
	/** Stops the server, drops its database and deletes its data dir. Idempotent. */
	close(): Promise<void>;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
	const dataDir = mkdtempSync(join(tmpdir(), "chopin-server-"));
	let database: TestDatabase | undefined;
	const logs: Record<string, unknown>[] = [];
	const echo = process.env.CHOPIN_TEST_LOGS === "1";
	const log = createLogger({
		level: "debug",
		clock: options.clock,
		write: (line) => {
			logs.push(JSON.parse(line) as Record<string, unknown>);
			if (echo) process.stderr.write(`${line}\n`);
		},
	});
	const cleanup = async () => {
		await database?.drop();
		rmSync(dataDir, { recursive: true, force: true });
	};

	let env: Env;
	let running: RunningServer;
	try {
		if (options.store === "postgres") database = await createTestDatabase("postgres");
		env = {
			PORT: "0",
			HOST: "127.0.0.1",
			DATA_DIR: dataDir,
			...options.env,
			...(database && { DATABASE_URL: database.url }),
		};
		running = await start(env);
	} catch (error) {
		await cleanup();
		throw error;
	}

	async function start(startEnv: Env): Promise<RunningServer> {
		const config = loadConfig(readEnvFiles(startEnv));
		return startServer(config, {
			clock: options.clock,
			log,
			register: options.register,
			fetch: options.fetch,
		});
	}

	let closing: Promise<void> | undefined;
	const server: TestServer = {
		get url() {
			return running.url;
		},
		get port() {
			return running.port;
		},
		get context() {
			return running.context;
		},
		fetch: (req) => running.fetch(req),
		logs,
		get env() {
			return env;
		},
		async restart(options = {}) {
			if (closing) throw new Error("the test server is closed");
			const publicUrl = running.context.config.publicUrl;
			await running.stop();
			await options.whileDown?.(running.port);
			// Same port and the same origin as before, so clients reconnect to what they knew.
			env = { ...env, PORT: String(running.port), PUBLIC_URL: env.PUBLIC_URL ?? publicUrl };
			running = await start(env);
		},
		close() {
			closing ??= (async () => {
				try {
					await running.stop();
				} finally {
					await cleanup();
				}
			})();
			return closing;
		},
		[Symbol.asyncDispose]() {
			return server.close();
		},
	};
	return server;
}
