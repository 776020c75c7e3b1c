// Spec "runs": full run cards shown on the document page (64 cards, 64 stages, earlierStages, parentIds), a
// session kept while its runs are live, and live runs shown stopped when the link closes.
import { afterEach, describe, expect, test } from "bun:test";
import type { LiveEvent } from "../live/events";
import { AgentFixture } from "../testing/agent-fixture";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

async function inTurn() {
	f = await AgentFixture.start();
	const doc = await f.createDocument();
	await f.signIn("alice");
	const { socket } = await f.attach("alice", doc.id);
	const events = f.events(doc.id);
	const turn = await f.chatTurn(socket, doc.id, "bob");
	return { f, socket, turn, events, documentId: doc.id };
}

const stage = (i: number, extra: Record<string, unknown> = {}) => ({
	id: `st-${i}`,
	name: `Stage ${i}`,
	status: "completed",
	started: 1_760_000_000 + i,
	...extra,
});
const card = (id: string, fields: Record<string, unknown> = {}) => ({
	id,
	name: `Run ${id}`,
	status: "running",
	started: 1_760_000_000,
	updated: 1_760_000_100,
	stages: [],
	waiting: 0,
	...fields,
});

describe("run cards", () => {
	test("a runs report becomes the document's run cards, published live", async () => {
		const { f, socket, turn, events, documentId } = await inTurn();
		const stages = [
			stage(0),
			stage(1, { parentIds: ["st-0"], kind: "tool", status: "running" }),
			...Array.from({ length: 62 }, (_, i) => stage(i + 2)),
		];
		socket.send({
			type: "runs",
			session: turn.session,
			active: ["r1"],
			paused: [],
			cards: [
				card("r1", { stages, earlierStages: 10 }),
				...Array.from({ length: 63 }, (_, i) => card(`x${i}`)),
			],
		});
		await f.ctx.planner.settled();
		await f.until(async () => (await f.ctx.domain.runs.list(documentId)).length === 64, "64 cards");
		const [first] = await f.ctx.domain.runs.list(documentId);
		expect(first).toMatchObject({
			id: "r1",
			session: turn.session,
			displayStatus: "running",
			live: true,
			earlierStages: 10,
		});
		expect(first!.stages).toHaveLength(64);
		expect(first!.stages[1]).toMatchObject({
			id: "st-1",
			parentIds: ["st-0"],
			kind: "tool",
			displayStatus: "running",
		});
		expect(events.some((e) => e.type === "runs.updated" && e.cards.length === 64)).toBe(true);
	});

	test("a session is kept after its turn while it reports live runs, and destroyed once none are", async () => {
		const { f, socket, turn } = await inTurn();
		socket.send({ type: "runs", session: turn.session, active: ["r1"], paused: [], cards: [card("r1")] });
		socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
		await f.sync(socket);
		await f.ctx.planner.settled();
		expect(socket.pending.some((m) => m.type === "destroy")).toBe(false);
		socket.send({
			type: "runs",
			session: turn.session,
			active: [],
			paused: [],
			cards: [card("r1", { status: "finished", ended: 1_760_000_200 })],
		});
		expect(await socket.nextOf("destroy")).toEqual({ type: "destroy", session: turn.session });
	});

	test("when the link closes, the live runs it reported are shown stopped", async () => {
		const { f, socket, turn, documentId, events } = await inTurn();
		socket.send({
			type: "runs",
			session: turn.session,
			active: ["live"],
			paused: ["held"],
			cards: [
				card("live", { stages: [stage(0, { status: "running" })] }),
				card("held", { status: "paused" }),
				card("done", { status: "finished", ended: 1_760_000_300 }),
			],
		});
		await f.until(async () => (await f.ctx.domain.runs.list(documentId)).length === 3, "the cards");
		socket.terminate();
		await f.until(() => f.ctx.planner.connections() === 0);
		await f.ctx.planner.settled();
		const cards = await f.ctx.domain.runs.list(documentId);
		expect(cards.map((c) => [c.id, c.displayStatus])).toEqual([
			["done", "finished"],
			["held", "stopped"],
			["live", "stopped"],
		]);
		expect(cards.find((c) => c.id === "live")!.stages[0]!.displayStatus).toBe("stopped");
		const last = events.findLast(
			(e): e is Extract<LiveEvent, { type: "runs.updated" }> => e.type === "runs.updated",
		);
		expect(last!.cards.map((c) => c.displayStatus).sort()).toEqual(["stopped", "stopped"]);
	});

	test("a report for a session that has ended is ignored", async () => {
		const { f, socket, turn, documentId } = await inTurn();
		socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
		await socket.expect("destroy");
		socket.send({ type: "runs", session: turn.session, active: ["r1"], paused: [], cards: [card("r1")] });
		await f.sync(socket);
		await f.ctx.planner.settled();
		expect(await f.ctx.domain.runs.list(documentId)).toEqual([]);
	});
});
