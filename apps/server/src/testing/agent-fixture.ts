// A real server for agent-connection tests, in local or GitHub mode (against the emulator), on SQLite or
// PostgreSQL, with a ManualClock: documents, browser sign-ins, bearers, raw agent sockets, and the live events.
import type { Question } from "@chopin/agent-link";
import { ManualClock } from "@chopin/agent-link/clock";
import type { Env } from "../config";
import type { DocumentView } from "../documents/document-view";
import type { LiveEvent } from "../live/events";
import type { StoreKind } from "../store/store";
import {
	type AgentSocket,
	type AgentSocketOptions,
	connectAgentSocket,
	openAgentSocket,
} from "./agent-socket";
import { type GitHubEmulator, startGitHubEmulator } from "./github-emulator";
import { PAT, testFixture } from "./github-emulator-test-kit";
import { startTestServer, type TestServer } from "./server";
import { type CookieJar, signInLocally, signInWithGitHub } from "./sign-in";

export type AgentMode = "local" | "github";

/** Local accounts: alice admin, bob write, carol read, dave none on acme/app; each with a development token. */
export const LOCAL_ACCOUNTS = {
	users: [
		{ login: "alice", token: "alice-dev-token-0123456789" },
		{ login: "bob", token: "bob-dev-token-0123456789" },
		{ login: "carol", token: "carol-dev-token-0123456789" },
		{ login: "dave", token: "dave-dev-token-0123456789" },
	],
	repositories: { "acme/app": { alice: "admin", bob: "write", carol: "read" } },
	organizations: {},
};

/** Who plays which part in each mode: an admin, another writer, a reader, an outsider; and the repository. */
export const CAST = {
	local: { admin: "alice", writer: "bob", reader: "carol", outsider: "dave", repository: "acme/app" },
	github: {
		admin: "octocat",
		writer: "hubot",
		reader: "reader",
		outsider: "outsider",
		repository: "score-team/score",
	},
} as const;

export const PUBLIC_URL = "http://chopin.test";

export interface AgentFixtureOptions {
	mode?: AgentMode;
	store?: StoreKind;
	env?: Env;
}

export class AgentFixture {
	readonly cast: (typeof CAST)[AgentMode];
	readonly #tokens = new Map<string, string>();
	readonly #sockets: AgentSocket[] = [];
	readonly #jars = new Map<string, CookieJar>();

	private constructor(
		readonly mode: AgentMode,
		readonly clock: ManualClock,
		readonly server: TestServer,
		readonly gh: GitHubEmulator | undefined,
	) {
		this.cast = CAST[mode];
		if (mode === "local") for (const u of LOCAL_ACCOUNTS.users) this.#tokens.set(u.login, u.token);
		else this.#tokens.set("octocat", PAT);
	}

	static async start(options: AgentFixtureOptions = {}): Promise<AgentFixture> {
		const mode = options.mode ?? "local";
		const clock = new ManualClock();
		let gh: GitHubEmulator | undefined;
		// Long liveness timeouts unless a test sets them: a ManualClock jumping minutes ahead fires
		// pings faster than a socket's pong can come back over the loopback.
		let env: Env = {
			PUBLIC_URL,
			DEMO: "off",
			AGENT_CONNECTION_TIMEOUT_MS: "3000000",
			AGENT_CONNECTION_MAX_SILENCE_MS: "3600000",
			...options.env,
		};
		if (mode === "github") {
			const fixture = testFixture();
			// The app redirects to the server's own origin (a test may give it a real one, for a browser).
			fixture.apps[0]!.redirectUri = env.PUBLIC_URL ?? PUBLIC_URL;
			gh = await startGitHubEmulator({ fixture, clock });
			env = { ...gh.env(), ...env };
		} else {
			env = { AUTH_MODE: "local", LOCAL_ACCOUNTS: JSON.stringify(LOCAL_ACCOUNTS), ...env };
		}
		try {
			const server = await startTestServer({ store: options.store, env, clock });
			return new AgentFixture(mode, clock, server, gh);
		} catch (error) {
			await gh?.stop();
			throw error;
		}
	}

	get ctx() {
		return this.server.context;
	}

	get publicUrl(): string {
		return this.server.context.config.publicUrl;
	}

	/** A bearer of the account (issued by the emulator on first use in GitHub mode). */
	token(login: string): string {
		let token = this.#tokens.get(login);
		if (!token) {
			if (!this.gh) throw new Error(`${login} has no local token`);
			token = this.gh.addToken({ login });
			this.#tokens.set(login, token);
		}
		return token;
	}

	async createDocument(
		fields: { title?: string; source?: string; repository?: string; by?: string } = {},
	): Promise<DocumentView> {
		return this.ctx.domain.documents.create({
			repository: fields.repository ?? this.cast.repository,
			title: fields.title ?? "Rollout plan",
			source: fields.source ?? "# Rollout plan\n\nWe ship in two steps.\n",
			createdBy: fields.by ?? this.cast.admin,
		});
	}

	/** Signs the account in as a browser does, so it has a live sign-in on this server. */
	async signIn(login: string): Promise<CookieJar> {
		const target = { fetch: (req: Request) => this.server.fetch(req), publicUrl: this.publicUrl };
		const jar =
			this.mode === "github"
				? (await signInWithGitHub(target, login)).jar
				: (await signInLocally(target, login)).jar;
		this.#jars.set(login, jar);
		return jar;
	}

	async signOut(login: string): Promise<void> {
		const jar = this.#jars.get(login);
		if (!jar) throw new Error(`${login} is not signed in`);
		const res = await this.request("POST", "/auth/sign-out", undefined, jar);
		if (res.status !== 204) throw new Error(`sign-out answered ${res.status}`);
		await this.ctx.sessions.settled();
	}

	/** A request through the router as a page would send it (JSON, our Origin, the jar's cookies). */
	request(method: string, path: string, body?: unknown, jar?: CookieJar): Promise<Response> {
		return this.server.fetch(
			new Request(new URL(path, this.publicUrl), {
				method,
				headers: {
					origin: this.publicUrl,
					"content-type": "application/json",
					...(jar && { cookie: jar.header() }),
				},
				body: body === undefined ? undefined : JSON.stringify(body),
			}),
		);
	}

	/** The upgrade as given, answered 101 or refused. */
	open(options: Partial<AgentSocketOptions> & { login?: string } = {}) {
		const { login, ...rest } = options;
		return openAgentSocket({
			url: this.server.url,
			token: login ? this.token(login) : undefined,
			...rest,
		}).then((answer) => {
			if (answer.socket) this.#sockets.push(answer.socket);
			return answer;
		});
	}

	/** An upgraded socket for the account, not attached yet. */
	async connect(login: string, options: Partial<AgentSocketOptions> = {}): Promise<AgentSocket> {
		const socket = await connectAgentSocket({ url: this.server.url, token: this.token(login), ...options });
		this.#sockets.push(socket);
		return socket;
	}

	/** Connects and attaches the document; the attached message must come. */
	async attach(login: string, documentId: string, options: Partial<AgentSocketOptions> = {}) {
		const socket = await this.connect(login, options);
		socket.send({ type: "attach", version: 1, document: documentId });
		const attached = await socket.expect("attached");
		return { socket, attached };
	}

	/**
	 * Waits until the server has read everything this socket sent so far: a host-tool-call for a
	 * session that does not exist is answered in order, after every frame before it.
	 */
	async sync(socket: AgentSocket): Promise<void> {
		const toolCallId = `sync-${crypto.randomUUID()}`;
		socket.send({
			type: "host-tool-call",
			session: "sync",
			turn: "sync",
			toolCallId,
			toolName: "read_plan",
			input: "{}",
		});
		for (;;) {
			const message = await socket.next();
			if (message.type === "host-tool-result" && message.toolCallId === toolCallId) return;
			this.#skipped.push(message);
		}
	}

	/** Messages sync() read past while waiting for its answer. */
	readonly #skipped: unknown[] = [];

	/**
	 * A person's @chopin message as the Chat API would send it; the socket must get start, answer
	 * started, and get the turn. Returns the turn message.
	 */
	async chatTurn(socket: AgentSocket, documentId: string, author: string, body = "@chopin what next?") {
		const result = await this.ctx.planner.handleMessage({ documentId, author, body });
		if (result.status !== "sent" || !result.turn)
			throw new Error(`the message was not sent: ${JSON.stringify(result)}`);
		const start = await socket.expect("start");
		socket.send({ type: "started", session: start.session });
		const turn = await socket.expect("turn");
		return { ...turn, message: result.message };
	}

	/**
	 * The turn asks one question (request q1) and, unless `run` is false, reports one live run (r1), then ends;
	 * resolves once the Decision (and the run's card) exist.
	 */
	async askAndRun(
		socket: AgentSocket,
		documentId: string,
		turn: { session: string; turn: string },
		input: Question,
		options: { run?: boolean } = {},
	): Promise<void> {
		const { session } = turn;
		const run = options.run ?? true;
		socket.send({ type: "input-request", request: "q1", session, input });
		if (run) {
			const card = {
				id: "r1",
				name: "Run",
				status: "running" as const,
				started: 1,
				updated: 1,
				stages: [],
				waiting: 0,
			};
			socket.send({ type: "runs", session, active: ["r1"], paused: [], cards: [card] });
		}
		socket.send({ type: "turn-end", session, turn: turn.turn, status: "finished" });
		const { decisions, runs } = this.ctx.domain;
		await this.until(async () => !!(await decisions.findByRequest(documentId, "q1")), "the Decision");
		if (run) await this.until(async () => (await runs.list(documentId)).length === 1, "the run card");
	}

	/** The document's Chat, oldest first. */
	async chat(documentId: string) {
		return (await this.ctx.domain.chat.list(documentId)).messages;
	}

	/** The server side of this process's only agent socket. */
	serverSocket() {
		const sockets = [...this.ctx.sockets.open].filter((ws) => ws.data.kind === "agent");
		if (sockets.length !== 1) throw new Error(`${sockets.length} agent sockets are open`);
		return sockets[0]!;
	}

	/** Records the document's live events from now on. */
	events(documentId: string): LiveEvent[] {
		const seen: LiveEvent[] = [];
		this.ctx.domain.hub.subscribe(documentId, (event) => seen.push(event));
		return seen;
	}

	/** Waits until the predicate holds, letting the server's promises and the clock's due timers run. */
	async until(predicate: () => boolean | Promise<boolean>, what = "a condition"): Promise<void> {
		for (let i = 0; i < 6000; i++) {
			if (await predicate()) return;
			await Bun.sleep(i < 50 ? 0 : 5);
		}
		throw new Error(`timed out waiting for ${what}`);
	}

	async close(): Promise<void> {
		for (const socket of this.#sockets.splice(0)) socket.terminate();
		try {
			await this.server.close();
		} finally {
			if (this.gh) {
				try {
					this.gh.verify();
				} finally {
					await this.gh.stop();
				}
			}
		}
	}
}
