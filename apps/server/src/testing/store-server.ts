// A real server on a store the test already holds (describeStores' t.store), for route tests on both databases.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Clock } from "@chopin/agent-link/clock";
import { type Env, loadConfig } from "../config";
import type { AppContext } from "../context";
import { createLogger } from "../log";
import { type StartOverrides, startServer } from "../server";
import type { Store } from "../store/store";
import type { CookieJar } from "./sign-in";

export interface StoreServer {
	readonly url: string;
	readonly publicUrl: string;
	readonly context: AppContext;
	/** The router's fetch (no socket). */
	fetch(req: Request): Promise<Response>;
	/** GET a path on PUBLIC_URL with the jar's cookies. */
	get(path: string, jar?: CookieJar, headers?: Record<string, string>): Promise<Response>;
	/** POST JSON to a path on PUBLIC_URL with the jar's cookies and our Origin (as a page would). */
	post(path: string, body?: unknown, jar?: CookieJar, headers?: Record<string, string>): Promise<Response>;
	/** Every log line so far, as written. */
	readonly logs: string[];
	/** Stops the server and deletes its data dir; the store stays the caller's. */
	stop(): Promise<void>;
}

export async function startStoreServer(options: {
	store: Store;
	env?: Env;
	clock?: Clock;
	register?: StartOverrides["register"];
}): Promise<StoreServer> {
	const dataDir = mkdtempSync(join(tmpdir(), "chopin-server-"));
	const logs: string[] = [];
	let running: Awaited<ReturnType<typeof startServer>>;
	try {
		const config = loadConfig(
			{ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, ...options.env },
			{ cwd: dataDir },
		);
		running = await startServer(config, {
			store: options.store,
			clock: options.clock,
			log: createLogger({ level: "debug", clock: options.clock, write: (l) => logs.push(l) }),
			register: options.register,
		});
	} catch (error) {
		rmSync(dataDir, { recursive: true, force: true });
		throw error;
	}
	const publicUrl = running.context.config.publicUrl;
	const cookie = (jar?: CookieJar): Record<string, string> => (jar ? { cookie: jar.header() } : {});
	return {
		url: running.url,
		publicUrl,
		context: running.context,
		fetch: running.fetch,
		logs,
		get: (path, jar, headers = {}) =>
			running.fetch(new Request(new URL(path, publicUrl), { headers: { ...cookie(jar), ...headers } })),
		post: (path, body, jar, headers = {}) =>
			running.fetch(
				new Request(new URL(path, publicUrl), {
					method: "POST",
					headers: { origin: publicUrl, "content-type": "application/json", ...cookie(jar), ...headers },
					body: body === undefined ? undefined : JSON.stringify(body),
				}),
			),
		async stop() {
			try {
				await running.stop();
			} finally {
				rmSync(dataDir, { recursive: true, force: true });
			}
		},
	};
}
