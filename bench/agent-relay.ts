/**
 * How fast the agent endpoint relays a Planner's reply: one attached client streams text-delta parts of a
 * Chat turn while a subscriber of the live hub (what the /ws socket forwards to pages) watches the reply's
 * message.delta events. Prints parts/s at full speed and the added latency (client write to hub event) at
 * a steady rate. Targets: at least 50,000 parts/s, p99 under 5 ms. Not a test: it prints its figures.
 *
 *   bun bench/agent-relay.ts [parts, default 200000] [steady rate per second, default 20000]
 */
import { AgentFixture } from "../apps/server/src/testing/agent-fixture";

const total = Number(process.argv[2] ?? 200_000);
const rate = Number(process.argv[3] ?? 20_000);

const f = await AgentFixture.start({ env: { LOG_LEVEL: "warn" } });
try {
	const doc = await f.createDocument();
	await f.signIn("alice");
	const { socket } = await f.attach("alice", doc.id);
	const turn = await f.chatTurn(socket, doc.id, "bob", "@chopin write a long answer");
	const frame = (seq: number) =>
		socket.frame(
			1,
			Buffer.from(
				JSON.stringify({
					type: "part",
					session: turn.session,
					turn: turn.turn,
					part: { type: "text-delta", id: "text-1", delta: `d${seq};` },
				}),
			),
		);

	// Every part the hub delivers, and when: each part's text is d<seq>; and a delta event may carry several.
	let seen = 0;
	let events = 0;
	let onSeq: ((seq: number, at: number) => void) | undefined;
	f.ctx.domain.hub.subscribe(doc.id, (event) => {
		if (event.type !== "message.delta") return;
		events++;
		const at = performance.now();
		for (const part of event.delta.split(";")) {
			if (!part) continue;
			seen++;
			if (onSeq) onSeq(Number(part.slice(1)), at);
		}
	});
	const until = async (n: number) => {
		while (seen < n) await Bun.sleep(1);
	};

	// 1. Full speed: batches of 500 frames per write (made before the clock starts), as fast as the socket
	// takes them.
	let batches: Buffer[] = [];
	for (let i = 0; i < total; i += 500) {
		const batch: Buffer[] = [];
		for (let j = i; j < Math.min(total, i + 500); j++) batch.push(frame(j));
		batches.push(Buffer.concat(batch));
	}
	const started = performance.now();
	for (const batch of batches) {
		socket.write(batch);
		if (socket.unsentBytes > 4 * 1024 * 1024) while (socket.unsentBytes > 1024 * 1024) await Bun.sleep(1);
	}
	await until(total);
	const seconds = (performance.now() - started) / 1000;
	batches = [];
	console.log(
		`full speed: ${total.toLocaleString("en-US")} parts in ${seconds.toFixed(2)} s = ${Math.round(total / seconds).toLocaleString("en-US")} parts/s (${events.toLocaleString("en-US")} live delta events)`,
	);

	socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
	await socket.expect("destroy");
	await f.until(async () => f.ctx.planner.status(doc.id).state === "attached", "the first reply to end");

	// 2. Steady rate, in a reply of its own: small batches every millisecond; latency from the client's
	// write to the hub's event.
	const second = await f.chatTurn(socket, doc.id, "bob", "@chopin and another");
	// Start the steady phase without the first phase's garbage.
	Bun.gc(true);
	const steadyFrame = (seq: number) =>
		socket.frame(
			1,
			Buffer.from(
				JSON.stringify({
					type: "part",
					session: second.session,
					turn: second.turn,
					part: { type: "text-delta", id: "text-1", delta: `d${seq};` },
				}),
			),
		);
	const latencies: number[] = [];
	const sentAt = new Map<number, number>();
	onSeq = (seq, at) => {
		const sent = sentAt.get(seq);
		if (sent !== undefined) latencies.push(at - sent);
	};
	const steady = Math.min(total, rate * 3);
	const perMs = Math.max(1, Math.round(rate / 1000));
	const base = seen;
	const t0 = performance.now();
	let next = total;
	for (let sent = 0; sent < steady; ) {
		const due = Math.min(steady, Math.floor((performance.now() - t0) * perMs));
		const batch: Buffer[] = [];
		for (; sent < due; sent++, next++) batch.push(steadyFrame(next));
		const now = performance.now();
		for (let s = next - batch.length; s < next; s++) sentAt.set(s, now);
		if (batch.length) socket.write(Buffer.concat(batch));
		await Bun.sleep(1);
	}
	await until(base + steady);
	latencies.sort((a, b) => a - b);
	const pct = (p: number) =>
		latencies[Math.min(latencies.length - 1, Math.floor((latencies.length * p) / 100))]!;
	console.log(
		`steady ${rate.toLocaleString("en-US")}/s for ${steady.toLocaleString("en-US")} parts: added latency p50 ${pct(50).toFixed(2)} ms, p99 ${pct(99).toFixed(2)} ms, max ${latencies.at(-1)!.toFixed(2)} ms`,
	);
	socket.send({ type: "turn-end", session: second.session, turn: second.turn, status: "finished" });
	await f.until(async () => (await f.chat(doc.id)).at(-1)?.status === "done", "the reply to be stored");
	const replies = (await f.chat(doc.id)).filter((m) => m.role === "planner");
	console.log(
		`replies stored: ${replies.map((m) => `${m.body.length.toLocaleString("en-US")} characters`).join(", ")}`,
	);
} finally {
	await f.close();
}
