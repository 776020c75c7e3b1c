// Spec "runs" and "Run stage deltas": Chopin keeps every stage of a run across reconnects and restarts. A
// reattached client re-reports (a full card, then deltas) without losing or repeating any, reports an ended
// run with "stages": [] without wiping them, and after a restart the stages come back from the database.
import { afterEach, describe, expect, test } from "bun:test";
import { runnableKinds } from "../store/testing";
import { AgentFixture } from "../testing/agent-fixture";
import type { AgentSocket } from "../testing/agent-socket";
import { card, delta, stage, stages, T0 } from "../testing/run-cards";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

const FEATURES = { features: "run-stage-deltas" };
const ALL = stages("s", 150);
const ids = (run: { stages: { id: string }[] }) => run.stages.map((s) => s.id);

/** Attaches alice with run-stage-deltas and starts a Chat turn; report() sends one runs message and waits for it. */
async function attachInTurn(f: AgentFixture, documentId: string) {
	const { socket } = await f.attach("alice", documentId, FEATURES);
	const turn = await f.chatTurn(socket, documentId, "bob");
	const report = async (...cards: ReturnType<typeof card>[]) => {
		socket.send({ type: "runs", session: turn.session, active: ["r1"], paused: [], cards });
		await f.sync(socket);
		await f.ctx.planner.settled();
	};
	return { socket, report };
}

/** Every stage of r1 once, as a client sends them after each attach: a full card of 64, then a delta. */
async function reportAll(report: (...cards: ReturnType<typeof card>[]) => Promise<void>) {
	await report(card("r1", { stages: ALL.slice(0, 64), earlierStages: 3 }));
	await report(delta("r1", ALL.slice(64)));
}

async function closed(f: AgentFixture, socket: AgentSocket) {
	socket.terminate();
	await socket.closed;
	await f.until(() => f.ctx.planner.connections() === 0, "the link to close");
	await f.ctx.planner.settled();
}

test("a reattached client's re-report keeps every stage once, in place; an ended run sent with [] keeps them", async () => {
	f = await AgentFixture.start();
	const doc = await f.createDocument();
	await f.signIn("alice");
	const run = async () => (await f!.ctx.domain.runs.list(doc.id)).find((r) => r.id === "r1")!;

	const first = await attachInTurn(f, doc.id);
	await reportAll(first.report);
	await closed(f, first.socket);
	let r1 = await run();
	expect([r1.displayStatus, ids(r1), r1.earlierStages]).toEqual(["stopped", ALL.map((s) => s.id), 3]);

	// After the attach, every stage once again, one changed; then what changes, with a stored stage again.
	const again = await attachInTurn(f, doc.id);
	const changed = stage("s10", { status: "failed", started: T0 + 10, ended: T0 + 20 });
	await again.report(
		card("r1", { stages: [...ALL.slice(0, 10), changed, ...ALL.slice(11, 64)], earlierStages: 3 }),
	);
	await again.report(delta("r1", ALL.slice(64)));
	await again.report(delta("r1", [ALL[100]!, stage("s150", { status: "running" })]));
	r1 = await run();
	expect(r1.displayStatus).toBe("running");
	expect(ids(r1)).toEqual([...ALL.map((s) => s.id), "s150"]);
	expect(r1.stages[10]).toMatchObject({ status: "failed", ended: T0 + 20 });
	expect(r1.earlierStages).toBe(3);
	await closed(f, again.socket);

	// A client that no longer holds the stages reports the run as ended, with none.
	const late = await attachInTurn(f, doc.id);
	await late.report(card("r1", { status: "finished", ended: T0 + 500, updated: T0 + 500, earlierStages: 0 }));
	r1 = await run();
	expect([r1.displayStatus, r1.stages.length, r1.earlierStages]).toEqual(["finished", 151, 3]);
});

for (const store of runnableKinds()) {
	describe(`across a restart [${store}]`, () => {
		test("the stages are in the database: all of them after the restart, and deltas merge onto them", async () => {
			f = await AgentFixture.start({ store });
			const doc = await f.createDocument();
			await f.signIn("alice");
			const run = async () => (await f!.ctx.domain.runs.list(doc.id)).find((r) => r.id === "r1")!;
			const first = await attachInTurn(f, doc.id);
			await reportAll(first.report);
			await first.report(delta("r1", [stage("s5", { status: "skipped", kind: "tool", parentIds: ["s4"] })]));

			await f.server.restart();
			expect((await first.socket.closed).code).toBe(1012);
			let r1 = await run();
			expect([ids(r1), r1.earlierStages]).toEqual([ALL.map((s) => s.id), 3]);
			expect(r1.stages[5]).toEqual({
				id: "s5",
				name: "Stage s5",
				status: "skipped",
				kind: "tool",
				parentIds: ["s4"],
				displayStatus: "skipped",
			});

			await f.signIn("alice");
			const after = await attachInTurn(f, doc.id);
			await after.report(delta("r1", [stage("s0", { status: "running" }), stage("s150")]));
			r1 = await run();
			expect(ids(r1)).toEqual([...ALL.map((s) => s.id), "s150"]);
			expect([r1.stages[0]!.status, r1.stages[5]!.status, r1.earlierStages]).toEqual([
				"running",
				"skipped",
				3,
			]);
		});
	});
}
