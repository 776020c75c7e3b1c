// Spec "Run stage deltas" over a real link: with the feature, delta cards merge by stage id, a full card with
// "stages": [] keeps the stored stages, and a report split by the package client's reportRuns over several
// frames ends with every stage stored; without it, a delta card is malformed-message (1008).
import { afterEach, describe, expect, test } from "bun:test";
import { MAX_FRAME_BYTES } from "@chopin/agent-link";
import { type AgentLink, connectAgent, type Turn } from "@chopin/agent-link/client";
import type { LiveEvent } from "../live/events";
import { AgentFixture } from "../testing/agent-fixture";
import type { AgentSocket } from "../testing/agent-socket";
import { card, delta, stage, stages, T0 } from "../testing/run-cards";

let f: AgentFixture | undefined;
let link: AgentLink | undefined;
afterEach(async () => {
	link?.detach();
	link = undefined;
	await f?.close();
	f = undefined;
});

/** A link attached with these features (none: no header), in a Chat turn. */
async function inTurn(features?: string) {
	f = await AgentFixture.start();
	const doc = await f.createDocument();
	await f.signIn("alice");
	const { socket, attached } = await f.attach("alice", doc.id, features === undefined ? {} : { features });
	const events = f.events(doc.id);
	const turn = await f.chatTurn(socket, doc.id, "bob");
	const report = async (...cards: ReturnType<typeof card>[]) => {
		socket.send({ type: "runs", session: turn.session, active: cards.map((c) => c.id), paused: [], cards });
		await f!.sync(socket);
		await f!.ctx.planner.settled();
	};
	const run = async (id: string) => (await f!.ctx.domain.runs.list(doc.id)).find((r) => r.id === id)!;
	return { f, socket, attached, turn, events, report, run, documentId: doc.id };
}

const ids = (run: { stages: { id: string }[] }) => run.stages.map((s) => s.id);

describe("with run-stage-deltas", () => {
	test("attached grants it; a delta merges by id where the stage stands, [] changes nothing, earlierStages stays", async () => {
		const { attached, report, run, events } = await inTurn("run-stage-deltas");
		expect(attached.features).toEqual(["run-stage-deltas"]);
		await report(card("r1", { stages: [stage("a", { started: T0 }), stage("b")], earlierStages: 5 }));
		await report(
			delta("r1", [
				stage("c", { status: "pending" }),
				stage("a", { status: "running", kind: "tool" }),
				stage("d", { status: "pending" }),
				stage("c", { status: "running" }),
			]),
		);
		let r1 = await run("r1");
		expect(r1.stages.map((s) => [s.id, s.status])).toEqual([
			["a", "running"],
			["b", "completed"],
			["c", "running"],
			["d", "pending"],
		]);
		// Replaced whole: the started it no longer sends is gone.
		expect(r1.stages[0]).not.toHaveProperty("started");
		expect(r1.stages[0]!.kind).toBe("tool");
		expect(r1.earlierStages).toBe(5);

		const published = events.length;
		await report(delta("r1", [], { status: "waiting", waiting: 1 }));
		r1 = await run("r1");
		expect([ids(r1), r1.reportedStatus, r1.waiting, r1.earlierStages]).toEqual([
			["a", "b", "c", "d"],
			"waiting",
			1,
			5,
		]);
		expect(events.length).toBe(published + 1);

		// A full card with stages replaces them all, with its own earlierStages; deltas then add to those.
		await report(card("r1", { stages: [stage("x")], earlierStages: 1 }));
		await report(delta("r1", [stage("y")]));
		r1 = await run("r1");
		expect([ids(r1), r1.earlierStages]).toEqual([["x", "y"], 1]);
	});

	test('a full card with "stages": [] keeps the stored stages and ignores its earlierStages; its other fields apply', async () => {
		const { report, run } = await inTurn("run-stage-deltas");
		await report(card("r1", { stages: stages("s", 64), earlierStages: 2 }));
		await report(delta("r1", stages("s", 36, 64)));
		await report(card("r1", { status: "finished", ended: T0 + 300, updated: T0 + 300, earlierStages: 40 }));
		const r1 = await run("r1");
		expect(ids(r1)).toEqual(stages("s", 100).map((s) => s.id));
		expect(r1).toMatchObject({ displayStatus: "finished", ended: T0 + 300, earlierStages: 2, live: false });
	});

	test("a delta has no stage count limit but the frame, and parentIds may name a stage sent later", async () => {
		const { socket, turn, report, run } = await inTurn("run-stage-deltas");
		const many = stages("s", 5000).map((s, i) => (i === 0 ? { ...s, status: "running" as const } : s));
		many[0] = { ...many[0]!, parentIds: ["late"] };
		const frame = JSON.stringify({ type: "runs", session: turn.session, active: [], paused: [], cards: [] });
		expect(frame.length + JSON.stringify(delta("r1", many)).length).toBeLessThan(MAX_FRAME_BYTES);
		await report(delta("r1", many));
		let r1 = await run("r1");
		expect(r1.stages).toHaveLength(5000);
		// Its parent is not known yet: no parent, so the stage shows as reported.
		expect(r1.stages[0]!.displayStatus).toBe("running");
		await report(delta("r1", [stage("late", { status: "failed" })]));
		r1 = await run("r1");
		expect(ids(r1).slice(-2)).toEqual(["s4999", "late"]);
		expect(r1.stages[0]!.displayStatus).toBe("stopped");
		expect(socket.pending).toEqual([]);
	});

	test("the package client's reportRuns: a report over 2 MiB in frames that add up to every stage, then only changes", async () => {
		f = await AgentFixture.start();
		const doc = await f.createDocument();
		await f.signIn("alice");
		const long = (label: string) => `${label} `.padEnd(1500, "x");
		const reported = ["r0", "r1", "r2"].map((id, c) =>
			card(id, {
				name: long(`Run ${id}`),
				earlierStages: c,
				stages: Array.from({ length: 500 }, (_, s) => stage(`${id}-s${s}`, { name: long(`Stage ${s}`) })),
			}),
		);
		const sent: number[] = [];
		const turnDone = Promise.withResolvers<void>();
		link = await connectAgent({
			url: f.server.url,
			token: f.token("alice"),
			document: doc.id,
			resumable: false,
			handlers: {
				start: () => {},
				turn: async (turn: Turn) => {
					const report = { active: ["r0", "r1", "r2"], paused: [], cards: reported } as never;
					sent.push(turn.session.reportRuns(report));
					// Reported again with one stage changed: only that stage goes, and it stays where it stood.
					reported[1]!.stages[7] = stage("r1-s7", { name: "Changed", status: "failed" });
					sent.push(turn.session.reportRuns(report));
					await turn.end("finished");
					turnDone.resolve();
				},
				stop: () => ({ ok: true }),
				resume: () => ({ ok: true }),
			},
		});
		expect([...link.features]).toEqual(["run-stage-deltas"]);
		await f.ctx.planner.handleMessage({ documentId: doc.id, author: "bob", body: "@chopin report" });
		await turnDone.promise;
		const documentId = doc.id;
		// The turn-end comes after every part of both reports, so they have all been read.
		await f.until(async () => (await f!.chat(documentId)).at(-1)?.status === "done", "the reply");
		await f.ctx.planner.settled();
		// The first report needs more than a frame; the second is one delta card of the changed stage.
		expect(sent[0]).toBeGreaterThan(1);
		expect(sent[1]).toBe(1);
		const runs = await f.ctx.domain.runs.list(documentId);
		expect(runs.map((r) => [r.id, r.stages.length, r.earlierStages])).toEqual([
			["r0", 500, 0],
			["r1", 500, 1],
			["r2", 500, 2],
		]);
		for (const [c, run] of runs.entries()) expect(ids(run)).toEqual(reported[c]!.stages.map((s) => s.id));
		expect(runs[1]!.stages[7]).toMatchObject({ name: "Changed", status: "failed" });
	}, 60_000);
});

describe("without run-stage-deltas", () => {
	const deltaReport = (session: string) => ({
		type: "runs",
		session,
		active: ["r1"],
		paused: [],
		cards: [delta("r1", [stage("a")])],
	});

	async function refusedWith(socket: AgentSocket) {
		const error = await socket.expect("error");
		return { error, closed: await socket.closed };
	}

	for (const [label, features] of [
		["no Chopin-Agent-Features header", undefined],
		["a header without the feature", "resumable-sessions"],
	] as const) {
		test(`a delta card is malformed-message and closes 1008 (${label}); nothing is stored`, async () => {
			const { socket, attached, turn, documentId } = await inTurn(features);
			expect(attached.features ?? []).not.toContain("run-stage-deltas");
			socket.send(deltaReport(turn.session));
			const { error, closed } = await refusedWith(socket);
			expect(error.code).toBe("malformed-message");
			expect(error.message).toContain("run-stage-deltas");
			expect(closed).toEqual({ code: 1008, reason: "malformed-message" });
			await f!.ctx.planner.settled();
			expect(await f!.ctx.domain.runs.list(documentId)).toEqual([]);
		});
	}

	test('full cards replace the stored stages, and one with "stages": [] keeps them', async () => {
		const { report, run, events } = await inTurn();
		await report(card("r1", { stages: stages("s", 64), earlierStages: 36 }));
		await report(card("r1", { stages: stages("s", 64, 1), earlierStages: 37 }));
		let r1 = await run("r1");
		expect([ids(r1), r1.earlierStages]).toEqual([stages("s", 64, 1).map((s) => s.id), 37]);
		await report(card("r1", { status: "stopped", earlierStages: 0 }));
		r1 = await run("r1");
		expect([r1.stages.length, r1.earlierStages, r1.displayStatus]).toEqual([64, 37, "stopped"]);
		const last = events.findLast(
			(e): e is Extract<LiveEvent, { type: "runs.updated" }> => e.type === "runs.updated",
		);
		expect(last!.cards[0]!.stages).toHaveLength(64);
	});
});
