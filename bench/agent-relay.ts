/**
 * How fast a Planner's streamed reply reaches the people reading it, end to end: an agent process streams
 * text-delta parts one per WebSocket frame (chopin.agent.v1 on /api/v1/agent, as a model streams them) and a
 * page process holds the real /ws socket of a signed-in member's page (the server's Origin, the sign-in
 * cookie) for each document. The server runs in this process. Measured at 1, 8 and 64 documents (one link and
 * one page socket each) against a bare Bun WebSocket forwarder in the same run: a Bun.serve in this process
 * that parses each frame and forwards its delta to the document's page socket, batching per socket read as the
 * server does (setImmediate). Prints, for both:
 *   - added latency p50/p99 at a steady rate per document (agent send to page receive, on a clock both
 *     client processes share: performance.timeOrigin + performance.now(), written into each part's text);
 *   - parts/s at full speed (one frame per part, as fast as the sockets take them), first send to last receive.
 *     A burst lasts a fraction of a second, so one hiccup of the shared box moves it: the two sets of links are
 *     connected side by side, bursts alternate (bare, server) several times, and the throughput is the median
 *     of each pair's ratio.
 * An unmeasured warm-up round at 8 documents comes first. Also prints the CPU time of this process per part
 * (the server, or the bare forwarder) and, on PostgreSQL, of the backends serving it (pg-backend-cpu.ts), which
 * compete for the same cores. Every part must reach the page in order, and every delta must be stored in the
 * reply. Targets (issue 19):
 * p99 added latency under 5 ms, throughput at least 0.8x the bare forwarder. Not a test: it prints figures.
 *
 *   bun bench/agent-relay.ts [documents, default 1,8,64] [parts/s per document, default 100]
 *                            [steady seconds, default 5] [full-speed parts in all, default 32000]
 *                            [sqlite|postgres, default sqlite] [bursts of each, default 5]
 *                            [bun|chromium pages, default bun]
 *
 * chromium: the page sockets are a headless Chromium's (agent-relay-browser.ts), opened by a page of the server's
 * origin with the member's cookie, and timed in the page as each message event fires: the browser's own socket and
 * event loop are in the figure, as a person's are. The bare forwarder's sockets are opened by the same browser.
 */
import { join } from "node:path";
import type { ServerWebSocket } from "bun";
import type { StoreKind } from "../apps/server/src/store/store";
import { AgentFixture } from "../apps/server/src/testing/agent-fixture";
import { freePort } from "../test/reliability/support/server-process";
import { LineChild } from "./agent-relay-lines";
import { pgBackendCpuMicros } from "./pg-backend-cpu";

const counts = (process.argv[2] ?? "1,8,64").split(",").map(Number);
const rate = Number(process.argv[3] ?? 100);
const seconds = Number(process.argv[4] ?? 5);
const burstTotal = Number(process.argv[5] ?? 32_000);
const storeKind = (process.argv[6] ?? "sqlite") as StoreKind;
const bursts = Number(process.argv[7] ?? 5);
const pagesIn = process.argv[8] ?? "bun";
if (pagesIn !== "bun" && pagesIn !== "chromium") throw new Error("the pages argument is bun or chromium");

interface BareData {
	kind: "agent" | "page";
	document: string;
	pending: string;
	offset: number;
	scheduled: boolean;
}

/** The baseline: what a relay that does nothing else costs on this machine. */
function startBareForwarder() {
	const pages = new Map<string, ServerWebSocket<BareData>>();
	const flush = (data: BareData) => {
		data.scheduled = false;
		const delta = data.pending;
		data.pending = "";
		const event = {
			type: "message.delta",
			documentId: data.document,
			messageId: "m",
			offset: data.offset,
			delta,
		};
		data.offset += delta.length;
		pages.get(data.document)?.send(JSON.stringify(event));
	};
	return Bun.serve<BareData>({
		hostname: "127.0.0.1",
		port: 0,
		fetch(req, server) {
			const url = new URL(req.url);
			const data: BareData = {
				kind: url.pathname === "/ws" ? "page" : "agent",
				document: url.searchParams.get("document") ?? "",
				pending: "",
				offset: 0,
				scheduled: false,
			};
			if (server.upgrade(req, { data })) return undefined;
			return new Response("upgrade", { status: 426 });
		},
		websocket: {
			open(ws) {
				if (ws.data.kind !== "page") return;
				pages.set(ws.data.document, ws);
				ws.send(JSON.stringify({ type: "ready", documentId: ws.data.document }));
			},
			message(ws, message) {
				const frame = JSON.parse(String(message));
				if (frame.type !== "part" || frame.part?.type !== "text-delta") return;
				ws.data.pending += frame.part.delta;
				if (!ws.data.scheduled) {
					ws.data.scheduled = true;
					setImmediate(() => flush(ws.data));
				}
			},
		},
	});
}

/** The steady phase on one set of links: added latency, and CPU per part. */
interface Steady {
	p50: number;
	p99: number;
	max: number;
	/** CPU time of this process (the server, or the bare forwarder) per part: load-proof. */
	cpu: number;
	/** On PostgreSQL, the CPU time of its backends serving this process per part (0 on SQLite). */
	pg: number;
}

/** One full-speed burst on one set of links. */
interface Burst {
	partsPerSecond: number;
	cpu: number;
	pg: number;
}

const cpuMicros = () => {
	const { user, system } = process.cpuUsage();
	return user + system;
};

/** The PostgreSQL backends' CPU (0 on SQLite): set once the fixture's store is open. */
let pgMicros: () => Promise<number> = async () => 0;

const agents = new LineChild(join(import.meta.dir, "agent-relay-agents.ts"));
const pages = new LineChild(
	join(import.meta.dir, pagesIn === "chromium" ? "agent-relay-browser.ts" : "agent-relay-pages.ts"),
);

async function steadyPhase(set: string): Promise<Steady> {
	await pages.command({ cmd: "reset" }, "reset");
	const pg = await pgMicros();
	const cpu = cpuMicros();
	const sent = await agents.command({ cmd: "steady", set, rate, seconds }, "sent");
	const latency = await pages.command({ cmd: "expect", set, count: sent.count }, "done");
	return {
		p50: latency.p50,
		p99: latency.p99,
		max: latency.max,
		cpu: (cpuMicros() - cpu) / sent.count,
		pg: ((await pgMicros()) - pg) / sent.count,
	};
}

async function burstPhase(set: string, documents: number): Promise<Burst> {
	await pages.command({ cmd: "reset" }, "reset");
	const parts = Math.max(1, Math.round(burstTotal / documents));
	const pg = await pgMicros();
	const cpu = cpuMicros();
	const sent = await agents.command({ cmd: "burst", set, parts }, "sent");
	const full = await pages.command({ cmd: "expect", set, count: sent.count }, "done");
	return {
		partsPerSecond: sent.count / ((full.lastAt - sent.first) / 1000),
		cpu: (cpuMicros() - cpu) / sent.count,
		pg: ((await pgMicros()) - pg) / sent.count,
	};
}

const median = (xs: number[]) => {
	const sorted = [...xs].sort((a, b) => a - b);
	const mid = Math.floor(sorted.length / 2);
	return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

// A browser reaches the server at its public origin, so the server is named by its real address.
const port = pagesIn === "chromium" ? await freePort() : undefined;
const f = await AgentFixture.start({
	store: storeKind,
	env: {
		LOG_LEVEL: "warn",
		...(port !== undefined && { PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` }),
	},
});
const bare = startBareForwarder();
if (storeKind === "postgres") pgMicros = () => pgBackendCpuMicros(f.ctx.store);
try {
	const jar = await f.signIn("alice");
	const bareUrl = `http://127.0.0.1:${bare.port}`;
	console.log(
		`load average before: ${(await Bun.file("/proc/loadavg").text()).trim()}; ${storeKind}; pages in ${pagesIn}; ${rate} parts/s per document for ${seconds} s, then ${burstTotal.toLocaleString("en-US")} parts at full speed, ${bursts} times each alternately`,
	);
	// A warm-up round first, unmeasured: a running server has relayed replies before, and its code is
	// compiled by then; the bare forwarder's few lines need none.
	await round(8, jar, bareUrl, false);
	for (const n of counts) await round(n, jar, bareUrl, true);
	console.log(`load average after: ${(await Bun.file("/proc/loadavg").text()).trim()}`);
} finally {
	agents.kill();
	pages.kill();
	bare.stop(true);
	await f.close();
}

/**
 * One round at n documents: the bare forwarder's links and the server's side by side, each on fresh sockets;
 * the steady phase on each, then full-speed bursts alternately (bare, server), so a change in the shared
 * box's load between them moves both: the throughput is the median of each pair's ratio.
 */
async function round(n: number, jar: { header(): string }, bareUrl: string, print: boolean) {
	const bareDocs = Array.from({ length: n }, (_, i) => `bare-${n}-${i}`);
	await pages.command({ cmd: "connect", set: "bare", url: bareUrl, documents: bareDocs }, "ready");
	await agents.command(
		{ cmd: "connect", set: "bare", url: bareUrl, documents: bareDocs, bare: true },
		"turns",
	);

	const docs: string[] = [];
	for (let i = 0; i < n; i++) docs.push((await f.createDocument({ title: `Plan ${n}-${i}` })).id);
	await pages.command(
		{
			cmd: "connect",
			set: "relay",
			url: f.server.url,
			origin: f.publicUrl,
			cookie: jar.header(),
			documents: docs,
		},
		"ready",
	);
	agents.send({
		cmd: "connect",
		set: "relay",
		url: f.server.url,
		token: f.token("alice"),
		documents: docs,
		bare: false,
	});
	await agents.expect("attached");
	const sent = await Promise.all(
		docs.map((documentId) =>
			f.ctx.planner.handleMessage({ documentId, author: "bob", body: "@chopin write a long answer" }),
		),
	);
	const unsent = sent.find((result) => result.status !== "sent");
	if (unsent) throw new Error(`a message was not sent: ${JSON.stringify(unsent)}`);
	await agents.expect("turns");

	const baseline = await steadyPhase("bare");
	const relay = await steadyPhase("relay");
	const bareBursts: Burst[] = [];
	const relayBursts: Burst[] = [];
	for (let i = 0; i < bursts; i++) {
		bareBursts.push(await burstPhase("bare", n));
		relayBursts.push(await burstPhase("relay", n));
	}
	const ended = await agents.command({ cmd: "end", set: "relay" }, "ended");
	await verifyStored(docs, ended.sent);
	for (const set of ["bare", "relay"]) {
		await agents.command({ cmd: "close", set }, "closed");
		await pages.command({ cmd: "close", set }, "closed");
	}
	if (!print) return;

	const ms = (x: number) => `${x.toFixed(2)} ms`;
	const rateOf = (x: number) => Math.round(x).toLocaleString("en-US");
	const docsLabel = `${n} document${n === 1 ? "" : "s"}`;
	const ratios = relayBursts.map((r, i) => r.partsPerSecond / bareBursts[i]!.partsPerSecond);
	const pps = (b: Burst[]) => rateOf(median(b.map((x) => x.partsPerSecond)));
	const cpu = (s: Steady, b: Burst[]) =>
		`CPU ${s.cpu.toFixed(0)} µs/part steady, ${median(b.map((x) => x.cpu)).toFixed(1)} at full speed`;
	const pg =
		storeKind === "postgres"
			? ` (PostgreSQL backends: ${relay.pg.toFixed(1)} µs/part steady, ${median(relayBursts.map((x) => x.pg)).toFixed(2)} at full speed)`
			: "";
	console.log(`${docsLabel}: server ${cpu(relay, relayBursts)}${pg} | bare ${cpu(baseline, bareBursts)}`);
	console.log(
		`${docsLabel}: server p50 ${ms(relay.p50)} p99 ${ms(relay.p99)} max ${ms(relay.max)}, ${pps(relayBursts)} parts/s | bare p50 ${ms(baseline.p50)} p99 ${ms(baseline.p99)} max ${ms(baseline.max)}, ${pps(bareBursts)} parts/s | throughput ${median(ratios).toFixed(2)}x bare (median of ${bursts} pairs; ${Math.min(...ratios).toFixed(2)} to ${Math.max(...ratios).toFixed(2)})`,
	);
}

/** Every reply must end done holding every part its link sent, in order. */
async function verifyStored(docs: string[], sent: Record<string, number>) {
	for (const documentId of docs) {
		await f.until(async () => {
			const last = (await f.chat(documentId)).at(-1);
			return last?.role === "planner" && last.status === "done";
		}, "the reply to be stored");
		const body = (await f.chat(documentId)).at(-1)!.body;
		const seqs = body
			.split(";")
			.filter(Boolean)
			.map((part) => Number(part.split("@")[0]));
		const expected = sent[documentId]!;
		if (seqs.length !== expected || seqs.some((seq, i) => seq !== i)) {
			throw new Error(
				`document ${documentId}: the stored reply holds ${seqs.length} parts, ${expected} were sent`,
			);
		}
	}
}
