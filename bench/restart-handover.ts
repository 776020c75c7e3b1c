/**
 * A graceful restart with Planners waiting on questions (spec: After a server restart), in github mode against the
 * GitHub emulator, every part its own process: N documents (default 100), each with a resumable Planner (the package
 * client, connectAgent / reconnectAgent, in a few client processes) that asked one question. The server gets SIGTERM
 * (restarting, 1012, one planner_link_holds row per document) and the next process starts on the same port and data.
 * Half the questions are answered on the new process before their Planner resumes (those clients wait for the
 * bench's word), half after. Prints, from the new process's "listening" log line: every Planner back (resumed), every
 * answer delivered (p50/p99/max), and the counts: each request must get exactly one input-result frame, one
 * input-received and one settled question. Target: all within 5 s of listening, nothing lost or doubled.
 *
 * The Planners attach with paired-machine Planner credentials (chopin_p_, one per document), which need no browser
 * sign-in on the new process. Not a test: it prints its figures.
 *
 *   bun bench/restart-handover.ts [documents, default 100] [sqlite|postgres, default sqlite] [client processes, default 2]
 */
import { join } from "node:path";
import type { Subprocess } from "bun";
import { GitHubServer } from "../test/reliability/support/github-server";

const COUNT = Number(process.argv[2] ?? 100);
const STORE = (process.argv[3] ?? "sqlite") as "sqlite" | "postgres";
const PROCESSES = Number(process.argv[4] ?? 2);
const TARGET_MS = 5_000;

interface Event {
	type: string;
	document: string;
	at: number;
	request?: string;
	status?: string;
	code?: number;
	resumable?: boolean;
	sessions?: { session: string; requests: string[] }[];
	attempts?: number;
	local?: boolean;
	value?: unknown;
	message?: string;
	kind?: string;
}

/** One client process: its planners, every event it printed, and waiters on them. */
class Clients {
	readonly events: Event[] = [];
	readonly size: number;
	readonly #waiters = new Set<() => void>();
	readonly #stdin: import("bun").FileSink;

	constructor(
		readonly child: Subprocess<"pipe", "pipe", "inherit">,
		planners: { document: string; token: string; held: boolean }[],
	) {
		this.size = planners.length;
		this.#stdin = child.stdin;
		this.#stdin.write(`${JSON.stringify({ url: publicUrl, planners })}\n`);
		this.#stdin.flush();
		void this.#pump();
	}

	go(document: string): void {
		this.#stdin.write(`${JSON.stringify({ go: document })}\n`);
		this.#stdin.flush();
	}

	async #pump(): Promise<void> {
		const decoder = new TextDecoder();
		let partial = "";
		for await (const chunk of this.child.stdout) {
			const lines = (partial + decoder.decode(chunk, { stream: true })).split("\n");
			partial = lines.pop() ?? "";
			for (const line of lines) if (line) this.events.push(JSON.parse(line) as Event);
			for (const waiter of [...this.#waiters]) waiter();
		}
	}

	/** Resolves once check holds over the events so far (fails after limitMs). */
	until(check: () => boolean, what: string, limitMs = 60_000): Promise<void> {
		return new Promise((resolve, reject) => {
			const timer = setTimeout(() => {
				this.#waiters.delete(poll);
				reject(new Error(`gave up waiting for ${what}`));
			}, limitMs);
			const poll = () => {
				if (!check()) return;
				clearTimeout(timer);
				this.#waiters.delete(poll);
				resolve();
			};
			this.#waiters.add(poll);
			poll();
		});
	}
}

function summary(values: number[], unit = " ms"): string {
	const sorted = [...values].sort((a, b) => a - b);
	const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
	const ms = (v: number) => `${v.toFixed(0)}${unit}`;
	return `p50 ${ms(at(0.5))}, p99 ${ms(at(0.99))}, max ${ms(sorted.at(-1)!)} (n=${sorted.length})`;
}

/** Runs tasks with at most `limit` at a time (the HTTP calls a page would make, without flooding 2 cores). */
async function inBatches<T>(items: T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
	let next = 0;
	await Promise.all(
		Array.from({ length: Math.min(limit, items.length) }, async () => {
			while (next < items.length) await task(items[next++]!);
		}),
	);
}

// The emulator, the server (github mode, on the chosen store), octocat's sign-in and a paired machine.
const world = await GitHubServer.start({ store: STORE, env: { LOG_LEVEL: "info" } });
const publicUrl = world.publicUrl;
const clients: Clients[] = [];
try {
	const documents: string[] = [];
	await inBatches(
		Array.from({ length: COUNT }, (_, i) => i),
		8,
		async (i) => {
			documents[i] = await world.createDocument(`Plan ${i}`);
		},
	);
	const tokens = new Map<string, string>();
	await inBatches(documents, 8, async (document) => {
		tokens.set(document, await world.plannerToken(document));
	});
	// Even documents are answered before their Planner resumes, odd ones after.
	const held = new Set(documents.filter((_, i) => i % 2 === 0));
	const owner = new Map<string, Clients>();
	const firstStart = performance.now();
	for (let c = 0; c < PROCESSES; c++) {
		const mine = documents.filter((_, i) => i % PROCESSES === c);
		const child = Bun.spawn(["bun", join(import.meta.dir, "restart-handover-clients.ts")], {
			stdin: "pipe",
			stdout: "pipe",
			stderr: "inherit",
		});
		const group = new Clients(
			child,
			mine.map((document) => ({ document, token: tokens.get(document)!, held: held.has(document) })),
		);
		clients.push(group);
		for (const document of mine) owner.set(document, group);
	}
	const all = (type: string, group: Clients) => group.events.filter((e) => e.type === type).length;
	const everyone = (type: string, what: string) =>
		Promise.all(clients.map((group) => group.until(() => all(type, group) >= group.size, what)));
	await everyone("attached", "every Planner attached");
	console.log(
		`${COUNT} Planners attached in ${((performance.now() - firstStart) / 1000).toFixed(2)} s from ${PROCESSES} client processes (the first attach, a same-run baseline)`,
	);
	// Each Planner gets one @chopin message and asks its question in that turn.
	await inBatches(documents, 8, async (document) => {
		const res = await world.say(document, "@chopin is this ready?");
		if (res.status !== 201)
			throw new Error(`the @chopin message answered ${res.status}: ${await res.text()}`);
	});
	await everyone("asked", "every question asked");
	const decisions = new Map<string, string>();
	await inBatches(documents, 8, async (document) => {
		for (;;) {
			const open = (await world.decisions(document)).find((d) => d.status === "open");
			if (open) {
				decisions.set(document, open.id);
				return;
			}
			await Bun.sleep(20);
		}
	});
	console.log(`${decisions.size} questions open; SIGTERM the server`);

	const answered = new Map<string, { at: number; status: number }>();
	const answer = async (document: string) => {
		const at = performance.timeOrigin + performance.now();
		const res = await world.answer(decisions.get(document)!);
		answered.set(document, { at, status: res.status });
		if (res.status !== 200) console.log(`answering ${document} answered ${res.status}: ${await res.text()}`);
	};

	const stopAsked = performance.now();
	await world.stopProcess();
	const stopped = performance.now();
	const server = await world.startProcess();
	const line = await server.waitFor((l) => l.msg === "listening", "the listening line");
	const listening = Date.parse(String(line.time));
	console.log(
		`the old process stopped in ${((stopped - stopAsked) / 1000).toFixed(2)} s; the next one listened ${((performance.now() - stopped) / 1000).toFixed(2)} s later (its start, as a deploy's)`,
	);
	// The held half: answered on the new process (the page's cookie from before the restart), then let go.
	await inBatches([...held], 8, async (document) => {
		await answer(document);
		owner.get(document)!.go(document);
	});
	const heldAnswered = performance.timeOrigin + performance.now() - listening;
	// The other half: answered as soon as its Planner is back.
	const after = documents.filter((d) => !held.has(d));
	await inBatches(after, 8, async (document) => {
		const group = owner.get(document)!;
		await group.until(
			() => group.events.some((e) => e.type === "back" && e.document === document),
			`${document} back`,
		);
		await answer(document);
	});
	await Promise.all(
		clients.map((group) => group.until(() => all("settled", group) >= group.size, "every answer delivered")),
	);
	// A quiet second for a late duplicate to show up in the counts.
	await Bun.sleep(1_000);

	const events = clients.flatMap((group) => group.events);
	const of = (type: string, document: string) =>
		events.filter((e) => e.type === type && e.document === document);
	const back: number[] = [];
	const delivered: number[] = [];
	const sinceAnswer: number[] = [];
	const problems: string[] = [];
	for (const document of documents) {
		const asked = of("asked", document);
		const request = asked[0]?.request;
		const frames = of("input-result", document).filter((e) => e.request === request);
		const acks = of("input-received", document).filter((e) => e.request === request);
		const settled = of("settled", document);
		const resumed = of("resumed", document);
		const backs = of("back", document);
		if (asked.length !== 1) problems.push(`${document}: asked ${asked.length} times`);
		if (frames.length !== 1) problems.push(`${document}: ${frames.length} input-result frames`);
		if (acks.length !== 1) problems.push(`${document}: ${acks.length} input-received sent`);
		if (settled.length !== 1 || settled[0]!.status !== "answered" || settled[0]!.value !== true)
			problems.push(`${document}: settled ${JSON.stringify(settled.map((s) => [s.status, s.value]))}`);
		if (resumed.length !== 1 || resumed[0]!.sessions?.[0]?.requests.length !== 1)
			problems.push(`${document}: resumed ${JSON.stringify(resumed.map((r) => r.sessions))}`);
		if (backs.length !== 1) problems.push(`${document}: back ${backs.length} times`);
		for (const e of of("error", document)) problems.push(`${document}: ${e.message}`);
		const closes = of("closed", document);
		if (closes.length !== 1 || closes[0]!.code !== 1012 || !closes[0]!.resumable)
			problems.push(`${document}: closed ${JSON.stringify(closes.map((c) => c.code))}`);
		if (resumed[0]) back.push(resumed[0].at - listening);
		if (frames[0]) delivered.push(frames[0].at - listening);
		const given = answered.get(document);
		if (frames[0] && given && !held.has(document)) sinceAnswer.push(frames[0].at - given.at);
	}
	const heldBack = documents.filter((d) => held.has(d)).map((d) => of("resumed", d)[0]?.at ?? Number.NaN);
	const promptBack = after.map((d) => of("resumed", d)[0]?.at ?? Number.NaN);
	const attempts = (docs: string[]) => docs.map((d) => of("back", d)[0]?.attempts ?? 0);
	const failures = new Map<string, number>();
	for (const e of events.filter((e) => e.type === "failed")) {
		const key = `${e.kind} (${e.at < listening ? "while down" : "after listening"})`;
		failures.set(key, (failures.get(key) ?? 0) + 1);
	}
	const lastBack = Math.max(...back);
	const lastDelivered = Math.max(...delivered);
	const answers = await countAnswers();
	console.log(`Planners resumed, from listening: ${summary(back)}`);
	console.log(`  resuming at once (answered after): ${summary(promptBack.map((t) => t - listening))}`);
	console.log(`  held until answered (answered before): ${summary(heldBack.map((t) => t - listening))}`);
	console.log(
		`the ${held.size} answers given before their Planner resumed took until ${heldAnswered.toFixed(0)} ms after listening (8 at a time, over HTTP as a page)`,
	);
	console.log(`answers delivered (input-result), from listening: ${summary(delivered)}`);
	console.log(`  answered after the resume, from the answer's request to the frame: ${summary(sinceAnswer)}`);
	console.log(
		`connection attempts per Planner to come back: resuming at once ${summary(attempts(after), "")}; held ${summary(attempts([...held]), "")}`,
	);
	console.log(
		`all ${COUNT} back ${lastBack.toFixed(0)} ms and every answer delivered ${lastDelivered.toFixed(0)} ms after listening (target < ${TARGET_MS} ms): ${Math.max(lastBack, lastDelivered) < TARGET_MS ? "met" : "missed"}`,
	);
	const frames = events.filter((e) => e.type === "input-result").length;
	const acks = events.filter((e) => e.type === "input-received").length;
	const settled = events.filter((e) => e.type === "settled").length;
	console.log(
		`answers: ${answers.answered} answered in the store, ${frames} input-result frames, ${acks} input-received, ${settled} questions settled, for ${COUNT} requests; lost or doubled: ${problems.length === 0 && answers.answered === COUNT && answers.holds === 0 ? 0 : "see below"}`,
	);
	console.log(
		`failed attempts to come back: ${[...failures].map(([k, n]) => `${n} × ${k}`).join(", ") || "none"}`,
	);
	console.log(`planner_link_holds rows left: ${answers.holds}`);
	const serverErrors = server.logs.filter((l) => l.level === "error" || l.level === "warn");
	console.log(
		`the new process logged ${serverErrors.length} warnings or errors${serverErrors.length ? `: ${[...new Set(serverErrors.map((l) => l.msg))].join("; ")}` : ""}`,
	);
	console.log(
		`store ${STORE}; Planners: paired-machine Planner credentials (chopin_p_), no sign-in on the new process`,
	);
	if (problems.length) {
		console.log(`${problems.length} problem(s):`);
		for (const p of problems.slice(0, 20)) console.log(`  ${p}`);
	}
} finally {
	for (const group of clients) group.child.kill("SIGTERM");
	await Promise.all(clients.map((group) => group.child.exited));
	await world.close();
}

/** What the store says after the run: answered Decisions, and hold rows left behind. */
async function countAnswers(): Promise<{ answered: number; holds: number }> {
	return world.withStore(async (store) => {
		const rows = await store.many(store.sql`SELECT status FROM decisions`);
		const holds = await store.many(store.sql`SELECT document_id FROM planner_link_holds`);
		return { answered: rows.filter((r) => r.status === "answered").length, holds: holds.length };
	});
}
