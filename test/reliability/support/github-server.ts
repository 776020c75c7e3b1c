// The server in github mode as its own process, against the GitHub emulator (a process too), on SQLite or a fresh
// PostgreSQL schema: octocat signed in (the page's cookie survives restarts, sessions are stored), a paired machine
// and its Planner credentials (chopin_p_, which need no sign-in on a new process). Restarted on the same port, data
// dir and database. Shared by the restart tests and bench/restart-handover.ts.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { openStore, type Store, type StoreKind } from "../../../apps/server/src/store/store";
import { createTestDatabase, type TestDatabase } from "../../../apps/server/src/store/testing";
import {
	issuePlannerToken,
	pageRequest,
	pairWithGitHub,
	type Target,
} from "../../../apps/server/src/testing/machines";
import { type CookieJar, signInWithGitHub } from "../../../apps/server/src/testing/sign-in";
import { freePort, type ServerProcess, startServerProcess } from "./server-process";

const ROOT = join(import.meta.dir, "..", "..", "..");
const CLIENT_ID = "Iv1.chopinrestart0001";
const CLIENT_SECRET = "restart-secret-not-for-production";
export const REPOSITORY = "score-team/score";
export const LOGIN = "octocat";

export class GitHubServer {
	/** The process now (a new one after each start). */
	server!: ServerProcess;
	jar!: CookieJar;
	/** The paired machine's credential (chopin_m_). */
	machineCredential!: string;
	readonly target: Target;
	#down = true;

	private constructor(
		readonly store: StoreKind,
		readonly dataDir: string,
		readonly port: number,
		readonly env: Record<string, string>,
		private readonly emulator: Subprocess,
		private readonly database: TestDatabase | undefined,
	) {
		this.target = { fetch: (req) => fetch(req, { redirect: "manual" }), publicUrl: this.publicUrl };
	}

	get publicUrl(): string {
		return `http://127.0.0.1:${this.port}`;
	}

	/** The emulator, the database, the first server process, octocat's sign-in and a paired machine. */
	static async start(options: { store: StoreKind; env?: Record<string, string> }): Promise<GitHubServer> {
		const dataDir = mkdtempSync(join(tmpdir(), "chopin-github-server-"));
		const port = await freePort();
		const ghPort = await freePort();
		let emulator: Subprocess | undefined;
		let database: TestDatabase | undefined;
		try {
			emulator = await startEmulator(dataDir, ghPort, `http://127.0.0.1:${port}`);
			if (options.store === "postgres") database = await createTestDatabase("postgres");
			const ghOrigin = `http://127.0.0.1:${ghPort}`;
			const env: Record<string, string> = {
				AUTH_MODE: "github",
				GITHUB_URL: ghOrigin,
				GITHUB_API_URL: `${ghOrigin}/api/v3`,
				GITHUB_CLIENT_ID: CLIENT_ID,
				GITHUB_CLIENT_SECRET: CLIENT_SECRET,
				DEMO: "off",
				...(database && { DATABASE_URL: database.url }),
				...options.env,
			};
			const world = new GitHubServer(options.store, dataDir, port, env, emulator, database);
			await world.startProcess();
			world.jar = (await signInWithGitHub(world.target, LOGIN)).jar;
			const paired = await pairWithGitHub(world.target, world.jar, LOGIN, { repositories: [REPOSITORY] });
			world.machineCredential = paired.credential;
			return world;
		} catch (error) {
			emulator?.kill("SIGKILL");
			await database?.drop();
			rmSync(dataDir, { recursive: true, force: true });
			throw error;
		}
	}

	/** A new server process on the same port, data dir and database; resolves once it listens. */
	async startProcess(): Promise<ServerProcess> {
		this.server = await startServerProcess({ dataDir: this.dataDir, port: this.port, env: this.env });
		this.#down = false;
		return this.server;
	}

	/** SIGTERM (a graceful stop, the hand-over written), and waits for the process to end. */
	async stopProcess(): Promise<void> {
		await this.server.stop();
		this.#down = true;
	}

	/** kill -9 (a crash), and waits for the process to end. */
	async killProcess(): Promise<void> {
		await this.server.kill9();
		this.#down = true;
	}

	/** Starts a process again if a test left none running (a failure between a kill and the next start). */
	async ensureRunning(): Promise<void> {
		if (this.#down) await this.startProcess();
	}

	/** The Planner's state as the page reads it (GET /api/documents/:id/planner). */
	async plannerState(document: string): Promise<string> {
		const res = await this.page("GET", `/api/documents/${document}/planner`);
		if (res.status !== 200) throw new Error(`the Planner's status answered ${res.status}`);
		return ((await res.json()) as { planner: { state: string } }).planner.state;
	}

	/** A document of REPOSITORY, created as the page does; its id. */
	async createDocument(title: string): Promise<string> {
		const res = await this.page("POST", "/api/documents", {
			repository: REPOSITORY,
			title,
			source: `# ${title}\n\nWe ship in two steps.\n`,
		});
		if (res.status !== 201)
			throw new Error(`creating a document answered ${res.status}: ${await res.text()}`);
		return ((await res.json()) as { document: { id: string } }).document.id;
	}

	/** A Planner credential (chopin_p_) for the document, from the paired machine. */
	plannerToken(document: string): Promise<string> {
		return issuePlannerToken(this.target, this.machineCredential, document);
	}

	/** A Chat message as octocat (a `@chopin` one is a turn). */
	async say(document: string, body: string): Promise<Response> {
		return this.page("POST", `/api/documents/${document}/messages`, { body });
	}

	/** The document's Decisions as the page lists them. */
	async decisions(document: string): Promise<{ id: string; status: string }[]> {
		const res = await this.page("GET", `/api/documents/${document}/decisions`);
		if (res.status !== 200) throw new Error(`listing decisions answered ${res.status}`);
		return ((await res.json()) as { decisions: { id: string; status: string }[] }).decisions;
	}

	/** octocat answers a confirm Decision yes, as the page does. */
	answer(decision: string): Promise<Response> {
		return this.page("POST", `/api/decisions/${decision}/answer`, { answer: { kind: "confirm", yes: true } });
	}

	/** A request as octocat's page (the session cookie, our Origin). */
	page(method: string, path: string, body?: unknown): Promise<Response> {
		return pageRequest(this.target, this.jar, method, path, body);
	}

	/** Opens the server's database beside it, for what the store holds (hold rows, Decisions). */
	async withStore<T>(read: (store: Store) => Promise<T>): Promise<T> {
		const store = await openStore({
			url: this.database?.url ?? `sqlite://${join(this.dataDir, "chopin.db")}`,
		});
		try {
			return await read(store);
		} finally {
			await store.close();
		}
	}

	/** How many planner_link_holds rows the document has (0 or 1). */
	holdRows(document: string): Promise<number> {
		return this.withStore(
			async (s) =>
				(await s.many(s.sql`SELECT document_id FROM planner_link_holds WHERE document_id = ${document}`))
					.length,
		);
	}

	/** Stops the process (SIGTERM) and the emulator, drops the database and removes the data dir. */
	async close(): Promise<void> {
		if (!this.#down) await this.server.stop();
		this.emulator.kill("SIGTERM");
		await this.emulator.exited;
		await this.database?.drop();
		rmSync(this.dataDir, { recursive: true, force: true });
	}
}

/** The GitHub emulator as a process (github-emulator-cli.ts) with octocat, admin of REPOSITORY. */
async function startEmulator(dataDir: string, port: number, publicUrl: string): Promise<Subprocess> {
	const fixture = join(dataDir, "github-fixture.json");
	writeFileSync(
		fixture,
		JSON.stringify({
			apps: [
				{
					name: "Chopin (restart)",
					clientId: CLIENT_ID,
					clientSecret: CLIENT_SECRET,
					redirectUri: publicUrl,
				},
			],
			users: [{ login: LOGIN, orgs: ["score-team"] }],
			repositories: [{ fullName: REPOSITORY, private: true, permissions: { [LOGIN]: "admin" } }],
		}),
	);
	const child = Bun.spawn(
		[
			process.execPath,
			join(ROOT, "apps/server/src/testing/github-emulator-cli.ts"),
			"--fixture",
			fixture,
			"--port",
			String(port),
		],
		{ stdout: "ignore", stderr: "pipe" },
	);
	const reader = child.stderr.getReader();
	let text = "";
	while (!text.includes("GitHub emulator listening")) {
		const { value, done } = await reader.read();
		if (done) throw new Error(`the emulator exited: ${text}`);
		text += new TextDecoder().decode(value);
	}
	reader.releaseLock();
	// Keep draining its stderr so it never blocks on a full pipe.
	void child.stderr.pipeTo(new WritableStream({ write: (chunk) => void process.stderr.write(chunk) }));
	return child;
}
