/**
 * Message to turn frame: from the start of an `@chopin` message's POST (a real HTTP request with octocat's page
 * cookie to POST /api/documents/:id/messages) to the `turn` frame parsed by the attached package client, which runs
 * in its own process (bench/turn-latency-client.ts) and stamps the frame as its turn handler gets it. The server is
 * its own process too (github mode against the GitHub emulator, as bench/restart-handover.ts), on SQLite or a fresh
 * PostgreSQL schema; the Planner attaches with a paired machine's Planner credential (chopin_p_). The person's page is
 * open on the document (/ws), so every event of the turn reaches it as in Chopin. One turn at a time: the next message
 * is posted once the page hears the Planner is idle again (that wait is not timed). p50/p99 over N turns (default
 * 300) after a few untimed ones. Same-run baseline: the same client measure through a bare Bun HTTP -> WebSocket
 * forwarder process (bench/turn-latency-forwarder.ts), the same POST body and frame parse. Target: p99 < 5 ms.
 * Not a test: it prints its figures.
 *
 *   bun bench/turn-latency.ts [sqlite|postgres|both, default both] [turns, default 300] [runs, default 1] [local|github, default local] [pause ms, default 0] [earlier messages, default 0] [server warm-up turns, default 1000]
 *
 * The pause: 0 posts each message as soon as the Planner is idle again (back to back); 1000 waits a second first, as
 * a person writing the next message does. On a virtual machine the second is slower: the processes' caches go cold
 * while they wait (docs/performance.md).
 *
 * Server warm-up: before the measured document, that many turns on another document with its own Planner client, as a
 * running server has answered others' messages; 0 measures a server just started (its JIT compiling on the same
 * two cores, about 1 ms more at p50 and 4 ms more at p99; docs/performance.md).
 *
 * Earlier messages: the document's Chat holds that many people's messages (without @chopin, so no turn) before the
 * first turn, as a document used for months does; a turn's cost must not grow with them (docs/performance.md).
 *
 * local (the figure the target is about): AUTH_MODE=local, LOCAL_ACCOUNTS with octocat an admin of the repository,
 * LOCAL_PLANNER_CREDENTIALS=on; the access checks run in the server. github: AUTH_MODE=github against the GitHub
 * emulator process, where every access check asks GitHub fresh (two conditional requests, spec: no cache that skips
 * a check), so the emulator's answers are in the figure.
 *
 * TURN_TRACE=1 also prints each run's five slowest turns, each split into its steps.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL, type Subprocess } from "bun";
import type { StoreKind } from "../apps/server/src/store/store";
import { createTestDatabase } from "../apps/server/src/store/testing";
import {
	issuePlannerToken,
	pageRequest,
	pairLocally,
	type Target,
} from "../apps/server/src/testing/machines";
import { signInLocally } from "../apps/server/src/testing/sign-in";
import { GitHubServer } from "../test/reliability/support/github-server";
import { freePort, startServerProcess } from "../test/reliability/support/server-process";
import { SocketWithHeaders } from "./agent-relay-lines";

const WHICH = process.argv[2] ?? "both";
/** local: accounts from LOCAL_ACCOUNTS (the access checks are the server's own); github: against the emulator. */
const AUTH = (process.argv[5] ?? "local") as "local" | "github";
const TURNS = Number(process.argv[3] ?? 300);
const RUNS = Number(process.argv[4] ?? 1);
/** How long after the last turn ended the next message is posted: 0 back to back, 1000 as a person types the next. */
const PAUSE_MS = Number(process.argv[6] ?? 0);
/** How many messages the Chat holds before the first turn (people's, none mentioning @chopin). */
const EARLIER = Number(process.argv[7] ?? 0);
const WARM = 20;
/** Turns on another document first, so the server's code is warm as a running server's is (0: a cold server). */
const SERVER_WARM = Number(process.argv[8] ?? 1000);
const TARGET_MS = 5;
/** TURN_TRACE=1 prints each run's slowest turns split into their steps. */
const TRACE = process.env.TURN_TRACE === "1";

const now = () => performance.timeOrigin + performance.now();

/** A line of the client process; a turn's carries when its frames crossed the socket (turn-latency-client.ts). */
interface ClientEvent {
	type: string;
	tag?: string;
	at: number;
	message?: string;
	startIn?: number;
	startedOut?: number;
	turnIn?: number;
}

/** The steps a turn's time is split into, from the POST's start: each one's times, in ms. */
type Steps = Record<string, number[]>;

/** A turn's steps, each from the end of the one before; the bare forwarder's turn has no session to start. */
function stepsOf(started: number, e: ClientEvent): Record<string, number> {
	if (e.startIn === undefined || e.startedOut === undefined)
		return { "POST to the turn frame read": e.turnIn! - started, "the client's parse": e.at - e.turnIn! };
	return {
		"POST to `start` read (the message stored, first check)": e.startIn - started,
		"the client's `start`, to `started` written": e.startedOut - e.startIn,
		"`started` to the turn frame read (transcript, second check)": e.turnIn! - e.startedOut,
		"the client's parse, to its turn handler": e.at - e.turnIn!,
	};
}

/** A client process: its JSON lines, and waiters on them. */
class Client {
	readonly events: ClientEvent[] = [];
	readonly #waiters = new Set<() => void>();
	readonly child: Subprocess<"pipe", "pipe", "inherit">;

	constructor(input: Record<string, unknown>) {
		this.child = Bun.spawn(["bun", join(import.meta.dir, "turn-latency-client.ts")], {
			stdin: "pipe",
			stdout: "pipe",
			stderr: "inherit",
		});
		this.child.stdin.write(`${JSON.stringify(input)}\n`);
		this.child.stdin.flush();
		void this.#pump();
	}

	async #pump(): Promise<void> {
		const decoder = new TextDecoder();
		let partial = "";
		for await (const chunk of this.child.stdout) {
			const lines = (partial + decoder.decode(chunk, { stream: true })).split("\n");
			partial = lines.pop() ?? "";
			for (const line of lines) if (line) this.events.push(JSON.parse(line));
			for (const waiter of [...this.#waiters]) waiter();
		}
	}

	/** The first event that matches, once printed. */
	until(match: (e: Client["events"][number]) => boolean, what: string): Promise<Client["events"][number]> {
		return new Promise((resolve, reject) => {
			const timer = setTimeout(() => reject(new Error(`gave up waiting for ${what}`)), 30_000);
			const poll = () => {
				const error = this.events.find((e) => e.type === "error");
				if (error) return reject(new Error(`the client: ${error.message}`));
				const found = this.events.find(match);
				if (!found) return;
				clearTimeout(timer);
				this.#waiters.delete(poll);
				resolve(found);
			};
			this.#waiters.add(poll);
			poll();
		});
	}

	async close(): Promise<void> {
		this.child.kill("SIGTERM");
		await this.child.exited;
	}
}

function summary(values: number[]): { p50: number; p99: number; text: string } {
	const sorted = [...values].sort((a, b) => a - b);
	const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
	const f = (v: number) => `${v.toFixed(2)} ms`;
	return {
		p50: at(0.5),
		p99: at(0.99),
		text: `p50 ${f(at(0.5))}, p99 ${f(at(0.99))}, max ${f(sorted.at(-1)!)} (n=${sorted.length})`,
	};
}

/**
 * Posts warm + turns messages one at a time; the times from each POST's start to its frame, warm ones left out. The
 * pause comes before each message of a measured document, not the server's warm-up (turns 0), which only warms.
 */
async function measure(
	client: Client,
	post: (body: string) => Promise<Response>,
	idle: () => Promise<void>,
	steps: Steps,
	warm = WARM,
	turns = TURNS,
): Promise<number[]> {
	const times: number[] = [];
	for (let i = 0; i < warm + turns; i++) {
		await idle();
		if (PAUSE_MS > 0 && turns > 0) await Bun.sleep(PAUSE_MS);
		const tag = String(i);
		const frame = client.until((e) => e.type === "turn" && e.tag === tag, `turn #${tag}`);
		const started = now();
		const res = await post(`@chopin turn #${tag}`);
		if (res.status !== 201) throw new Error(`the message answered ${res.status}: ${await res.text()}`);
		const event = await frame;
		if (i < warm) continue;
		times.push(event.at - started);
		for (const [step, ms] of Object.entries(stepsOf(started, event))) {
			steps[step] ??= [];
			steps[step].push(ms);
		}
	}
	return times;
}

async function baseline(steps: Steps): Promise<number[]> {
	const forwarder = Bun.spawn(["bun", join(import.meta.dir, "turn-latency-forwarder.ts")], {
		stdout: "pipe",
		stderr: "inherit",
	});
	const reader = forwarder.stdout.getReader();
	const url = new TextDecoder().decode((await reader.read()).value).trim();
	const client = new Client({ mode: "bare", url: `${url.replace("http", "ws")}ws` });
	try {
		await client.until((e) => e.type === "attached", "the bare socket");
		return await measure(
			client,
			(body) =>
				fetch(`${url}messages`, {
					method: "POST",
					headers: { "content-type": "application/json" },
					body: JSON.stringify({ body }),
				}),
			async () => {},
			steps,
		);
	} finally {
		await client.close();
		forwarder.kill("SIGTERM");
		await forwarder.exited;
	}
}

/** What the bench asks of a server: a document, its Planner credential, octocat's messages and the Planner's state. */
interface World {
	publicUrl: string;
	/** octocat's sign-in cookie, as the page sends it. */
	cookie(): string;
	createDocument(title: string): Promise<string>;
	plannerToken(document: string): Promise<string>;
	say(document: string, body: string): Promise<Response>;
	plannerState(document: string): Promise<string>;
	/** After the earlier messages: the statistics a running database's autovacuum keeps (PostgreSQL's ANALYZE). */
	analyze?(): Promise<void>;
	close(): Promise<void>;
}

/** The server in AUTH_MODE=local as its own process, octocat signed in with the page's cookie, a paired machine. */
async function localWorld(store: StoreKind): Promise<World> {
	const dataDir = mkdtempSync(join(tmpdir(), "chopin-turn-latency-"));
	const database = store === "postgres" ? await createTestDatabase("postgres") : undefined;
	const server = await startServerProcess({
		dataDir,
		port: await freePort(),
		env: {
			AUTH_MODE: "local",
			DEMO: "off",
			LOG_LEVEL: "warn",
			LOCAL_ACCOUNTS: JSON.stringify({
				users: [{ login: "octocat" }],
				repositories: { "score-team/score": { octocat: "admin" } },
			}),
			LOCAL_PLANNER_CREDENTIALS: "on",
			...(database && { DATABASE_URL: database.url }),
		},
	});
	const target: Target = { fetch: (req) => fetch(req, { redirect: "manual" }), publicUrl: server.url };
	const { jar } = await signInLocally(target, "octocat");
	const { credential } = await pairLocally(target, jar, { repositories: ["score-team/score"] });
	const page = (method: string, path: string, body?: unknown) => pageRequest(target, jar, method, path, body);
	return {
		publicUrl: server.url,
		cookie: () => jar.header(),
		async createDocument(title) {
			const res = await page("POST", "/api/documents", {
				repository: "score-team/score",
				title,
				source: "# Plan\n",
			});
			if (res.status !== 201) throw new Error(`creating a document answered ${res.status}`);
			return ((await res.json()) as { document: { id: string } }).document.id;
		},
		plannerToken: (document) => issuePlannerToken(target, credential, document),
		say: (document, body) => page("POST", `/api/documents/${document}/messages`, { body }),
		async plannerState(document) {
			const res = await page("GET", `/api/documents/${document}/planner`);
			return ((await res.json()) as { planner: { state: string } }).planner.state;
		},
		async analyze() {
			if (!database) return;
			const sql = new SQL(database.url);
			await sql`ANALYZE chat_messages`;
			await sql.close();
		},
		async close() {
			await server.stop();
			await database?.drop();
			rmSync(dataDir, { recursive: true, force: true });
		},
	};
}

async function chopin(store: StoreKind, steps: Steps): Promise<number[]> {
	const world: World =
		AUTH === "local"
			? await localWorld(store)
			: githubWorld(await GitHubServer.start({ store, env: { LOG_LEVEL: "warn" } }));
	try {
		// A running server has answered other documents' messages before: its code is compiled by now (a cold one
		// spends the first thousand turns compiling it, on the same two cores). That warm-up is another document's,
		// with its own Planner, so the measured document and its client are as fresh as a person's next one.
		if (SERVER_WARM > 0) await turnsOn(world, await world.createDocument("Warm-up"), SERVER_WARM, 0, {});
		const document = await world.createDocument("Turn latency");
		for (let i = 0; i < EARLIER; i++) {
			const res = await world.say(document, `an earlier message, number ${i}`);
			if (res.status !== 201)
				throw new Error(`an earlier message answered ${res.status}: ${await res.text()}`);
		}
		// A table filled in seconds has no statistics yet, and PostgreSQL then plans the Chat's reads as if it were
		// small; a server that has run for months has had them kept by autovacuum all along.
		if (EARLIER > 0) await world.analyze?.();
		return await turnsOn(world, document, WARM, TURNS, steps);
	} finally {
		await world.close();
	}
}

/** The document's Planner attached (its own client process) and its page open; warm + turns messages, timed. */
async function turnsOn(world: World, document: string, warm: number, turns: number, steps: Steps) {
	let client: Client | undefined;
	let page: PageSocket | undefined;
	try {
		const token = await world.plannerToken(document);
		page = await PageSocket.open(world, document);
		client = new Client({ mode: "agent", url: world.publicUrl, token, document });
		await client.until((e) => e.type === "attached", "the Planner attached");
		while ((await world.plannerState(document)) !== "attached") await Bun.sleep(1);
		const idle = page;
		return await measure(
			client,
			(body) => world.say(document, body),
			() => idle.turnEnded(),
			steps,
			warm,
			turns,
		);
	} finally {
		page?.close();
		await client?.close();
	}
}

/** The GitHub-mode world, with its page cookie. */
function githubWorld(server: GitHubServer): World {
	return Object.assign(server, { cookie: () => server.jar.header() });
}

/**
 * The person's page, open on the document as it is while they write (/ws?document=<id>, the server's Origin, the
 * sign-in cookie): it gets every event of the turn, as the page does, and says when the Planner is idle again.
 */
class PageSocket {
	/** Turns seen to end: a planner.status back to "attached" after any other state. */
	#ended = 0;
	/** How many times turnEnded was called: the messages posted so far. */
	#asked = 0;
	#busy = false;
	#waiter?: () => void;

	private constructor(readonly ws: WebSocket) {
		ws.addEventListener("message", (event) => {
			const e = JSON.parse(String(event.data)) as { type: string; state?: string };
			if (e.type !== "planner.status") return;
			if (e.state !== "attached") this.#busy = true;
			else if (this.#busy) {
				this.#busy = false;
				this.#ended++;
				this.#waiter?.();
			}
		});
	}

	static open(world: World, document: string): Promise<PageSocket> {
		const ws = new SocketWithHeaders(`${world.publicUrl.replace(/^http/, "ws")}/ws?document=${document}`, {
			headers: { origin: world.publicUrl, cookie: world.cookie() },
		});
		return new Promise((resolve, reject) => {
			ws.onopen = () => resolve(new PageSocket(ws));
			ws.onerror = () => reject(new Error("the page socket failed"));
		});
	}

	/** Before the n-th message (from 0): resolves once n turns have ended, so the Planner is idle again. */
	turnEnded(): Promise<void> {
		const target = this.#asked++;
		return new Promise((resolve) => {
			const check = () => {
				if (this.#ended < target) return;
				this.#waiter = undefined;
				resolve();
			};
			this.#waiter = check;
			check();
		});
	}

	close(): void {
		this.ws.close();
	}
}

/** Each step's p50 / p99, so a miss says where its time went (each step's own tail, not a share of the total's). */
function printSteps(steps: Steps): void {
	for (const [step, times] of Object.entries(steps)) {
		const { p50, p99 } = summary(times);
		console.log(`    ${step}: p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`);
	}
}

/**
 * TURN_TRACE=1: the slowest turns, each split into its steps (in printSteps' order), which says whether a tail is one
 * step's or a stall anywhere (docs/performance.md). `times` and each step's list hold the turns in the same order.
 */
function printSlowest(times: number[], steps: Steps, count = 5): void {
	const slowest = times
		.map((ms, turn) => ({ ms, turn }))
		.sort((a, b) => b.ms - a.ms)
		.slice(0, count);
	for (const { ms, turn } of slowest) {
		const parts = Object.values(steps).map((list) => list[turn]!.toFixed(2));
		console.log(`    slow turn #${turn}: ${ms.toFixed(2)} ms = ${parts.join(" + ")}`);
	}
}

console.log(
	`pause before each message: ${PAUSE_MS} ms; earlier messages in the Chat: ${EARLIER}; server warm-up turns: ${SERVER_WARM}`,
);
const stores: StoreKind[] = WHICH === "both" ? ["sqlite", "postgres"] : [WHICH as StoreKind];
console.log(`load average before: ${(await Bun.file("/proc/loadavg").text()).trim()}`);
for (let run = 1; run <= RUNS; run++) {
	const bareSteps: Steps = {};
	const bare = summary(await baseline(bareSteps));
	console.log(`run ${run}: bare Bun HTTP -> WebSocket forwarder (baseline): ${bare.text}`);
	printSteps(bareSteps);
	for (const store of stores) {
		const steps: Steps = {};
		const times = await chopin(store, steps);
		const s = summary(times);
		console.log(
			`run ${run}: ${store} (${AUTH} auth): POST @chopin -> turn frame parsed: ${s.text}; p99 ${(s.p99 / bare.p99).toFixed(1)}x the baseline's, +${(s.p99 - bare.p99).toFixed(2)} ms; target p99 < ${TARGET_MS} ms: ${s.p99 < TARGET_MS ? "met" : "missed"}`,
		);
		printSteps(steps);
		if (TRACE) printSlowest(times, steps);
	}
	console.log(`load average: ${(await Bun.file("/proc/loadavg").text()).trim()}`);
}
