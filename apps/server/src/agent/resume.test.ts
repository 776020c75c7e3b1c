// Spec "Resuming after a dropped link" on the server: a resumable link that drops keeps its sessions with live
// runs or open questions (disconnected, no deadline), answers given meanwhile are held and delivered once after
// resumed, input-received acknowledges them, Stops are held and sent first, and what the client does not name
// ends. Without the feature a drop ends everything, as before.
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Question } from "@chopin/agent-link";
import { AgentFixture } from "../testing/agent-fixture";
import type { AgentSocket } from "../testing/agent-socket";
import { wording } from "./wording";

setDefaultTimeout(20_000);

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

const RESUMABLE = { features: "resumable-sessions" };

const question: Question = {
	method: "questionnaire",
	params: {
		questions: [
			{
				question: "Which store?",
				header: "Store",
				options: [
					{ label: "SQLite", description: "" },
					{ label: "PostgreSQL", description: "" },
				],
			},
		],
	},
};

const card = (id: string, status = "running") => ({
	id,
	name: `Run ${id}`,
	status,
	started: 1,
	updated: 1,
	stages: [],
	waiting: 0,
});

/** A resumable Planner in a turn that asked one question (request q1) and reported one live run (r1). */
async function asking(options: { features?: string; run?: boolean } = RESUMABLE) {
	f = await AgentFixture.start();
	const fx = f;
	const doc = await fx.createDocument();
	await fx.signIn("alice");
	const { socket, attached } = await fx.attach("alice", doc.id, { features: options.features });
	const turn = await fx.chatTurn(socket, doc.id, "bob");
	const session = turn.session;
	await fx.askAndRun(socket, doc.id, turn, question, { run: options.run ?? false });
	const decision = (await fx.ctx.domain.decisions.findByRequest(doc.id, "q1"))!;
	const answer = (label = "SQLite") =>
		fx.ctx.domain.decisions.answer(decision.id, {
			questionIndex: 0,
			answer: { kind: "option", label },
			by: "bob",
		});
	/** Drops the socket under the server (no close frame) and waits until the server noticed. */
	const drop = async (s: AgentSocket) => {
		s.terminate();
		await fx.until(() => fx.ctx.planner.connections() === 0, "the server noticing the drop");
	};
	const decisionStatus = async () => {
		const found = await fx.ctx.domain.decisions.findByRequest(doc.id, "q1");
		return found?.settledReason === "withdrawn" ? "withdrawn" : found?.status;
	};
	return { f: fx, doc, socket, attached, session, decision, answer, drop, decisionStatus };
}

async function reattach(fx: AgentFixture, documentId: string, options = RESUMABLE) {
	return (await fx.attach("alice", documentId, options)).socket;
}

describe("without resumable-sessions", () => {
	test("a drop ends everything: the question is withdrawn and the Planner is in its grace period", async () => {
		const { f, doc, socket, drop, decisionStatus, attached } = await asking({ features: undefined });
		expect(attached.features).toBeUndefined();
		await drop(socket);
		await f.until(async () => (await decisionStatus()) === "withdrawn", "the Decision withdrawn");
		expect(f.ctx.planner.status(doc.id).state).toBe("grace");
	});
});

describe("with resumable-sessions", () => {
	test("attached grants it; a drop keeps the question open and the Planner disconnected, with no deadline", async () => {
		const { f, doc, socket, drop, decisionStatus, attached } = await asking();
		expect(attached.features).toEqual(["resumable-sessions"]);
		await drop(socket);
		expect(f.ctx.planner.status(doc.id)).toEqual({ state: "disconnected", login: "alice" });
		expect(await decisionStatus()).toBe("open");
		// Nothing waits on the client meanwhile: @chopin is refused as with no Planner, and said so.
		const sent = await f.ctx.planner.handleMessage({ documentId: doc.id, author: "bob", body: "@chopin hi" });
		expect(sent).toEqual({
			status: "refused",
			code: "planner-not-attached",
			message: wording.machineOffline("alice"),
		});
		// Another account is refused, told the holder's connection dropped and its work is kept.
		await f.signIn("bob");
		const other = await f.connect("bob", RESUMABLE);
		other.send({ type: "attach", version: 1, document: doc.id });
		const refused = await other.expect("refused");
		expect(refused).toMatchObject({
			code: "planner-attached",
			message: wording.plannerDisconnected("alice"),
		});
		// The machine's idle period ends nothing: the document is in use.
		expect(f.ctx.planner.using(doc.id)).toBe(true);
	});

	test("a session whose only work is a paused run is kept too, its card paused and disconnected", async () => {
		f = await AgentFixture.start();
		const fx = f;
		const doc = await fx.createDocument();
		await fx.signIn("alice");
		const { socket } = await fx.attach("alice", doc.id, RESUMABLE);
		const turn = await fx.chatTurn(socket, doc.id, "bob");
		const { session } = turn;
		socket.send({ type: "runs", session, active: [], paused: ["r1"], cards: [card("r1", "paused")] });
		socket.send({ type: "turn-end", session, turn: turn.turn, status: "finished" });
		await fx.until(async () => (await fx.ctx.domain.runs.list(doc.id)).length === 1, "the card");
		socket.terminate();
		await fx.until(() => fx.ctx.planner.status(doc.id).state === "disconnected", "kept, disconnected");
		await fx.until(
			async () => (await fx.ctx.domain.runs.list(doc.id))[0]?.disconnected === true,
			"the badge",
		);
		expect((await fx.ctx.domain.runs.list(doc.id))[0]).toMatchObject({ displayStatus: "paused" });
		const second = await reattach(fx, doc.id);
		second.send({ type: "resume", sessions: [{ session, requests: [] }] });
		expect(await second.expect("resumed")).toEqual({
			type: "resumed",
			sessions: [{ session, requests: [] }],
		});
	});

	test("an answer given while the link is down is delivered once after resumed, and kept until acknowledged", async () => {
		const { f, doc, socket, session, answer, drop } = await asking();
		await drop(socket);
		await answer();
		const second = await reattach(f, doc.id);
		second.send({ type: "resume", sessions: [{ session, requests: ["q1"] }] });
		expect(await second.expect("resumed")).toEqual({
			type: "resumed",
			sessions: [{ session, requests: ["q1"] }],
		});
		const result = await second.expect("input-result");
		expect(result).toMatchObject({ request: "q1", status: "answered" });
		expect(f.ctx.planner.status(doc.id).state).toBe("attached");
		// Not acknowledged: the link drops again, and the next resume gets the same answer once more.
		await drop(second);
		const third = await reattach(f, doc.id);
		third.send({ type: "resume", sessions: [{ session, requests: ["q1"] }] });
		expect(await third.expect("resumed")).toEqual({
			type: "resumed",
			sessions: [{ session, requests: ["q1"] }],
		});
		expect(await third.expect("input-result")).toEqual(result);
		// Acknowledged: nothing is kept for it, and the session, with nothing else, is destroyed.
		third.send({ type: "input-received", request: "q1" });
		expect(await third.expect("destroy")).toEqual({ type: "destroy", session });
		await drop(third);
		expect(f.ctx.planner.status(doc.id).state).toBe("grace");
	});

	test("an answer given after the resume goes straight to the client; the question stays one Decision", async () => {
		const { f, doc, socket, session, answer, drop } = await asking();
		await drop(socket);
		const second = await reattach(f, doc.id);
		second.send({ type: "resume", sessions: [{ session, requests: ["q1"] }] });
		expect(await second.expect("resumed")).toEqual({
			type: "resumed",
			sessions: [{ session, requests: ["q1"] }],
		});
		await answer("PostgreSQL");
		expect(await second.expect("input-result")).toMatchObject({ request: "q1", status: "answered" });
		second.send({ type: "input-received", request: "q1" });
		expect(await second.expect("destroy")).toEqual({ type: "destroy", session });
		expect(await f.ctx.domain.decisions.list(doc.id, { all: true })).toHaveLength(1);
	});

	test("a request the client no longer names is withdrawn; one it names that is not held is not listed", async () => {
		const { f, doc, socket, session, drop, decisionStatus } = await asking({ ...RESUMABLE, run: true });
		await drop(socket);
		const second = await reattach(f, doc.id);
		second.send({ type: "resume", sessions: [{ session, requests: ["gone"] }] });
		expect(await second.expect("resumed")).toEqual({
			type: "resumed",
			sessions: [{ session, requests: [] }],
		});
		await f.until(async () => (await decisionStatus()) === "withdrawn", "the Decision withdrawn");
	});

	test("a session the client does not name ends: its question is withdrawn and its runs show stopped", async () => {
		const { f, doc, socket, drop, decisionStatus } = await asking({ ...RESUMABLE, run: true });
		await drop(socket);
		const second = await reattach(f, doc.id);
		second.send({ type: "resume", sessions: [{ session: "another", requests: [] }] });
		expect(await second.expect("resumed")).toEqual({ type: "resumed", sessions: [] });
		await f.until(async () => (await decisionStatus()) === "withdrawn", "the Decision withdrawn");
		await f.until(
			async () => (await f.ctx.domain.runs.list(doc.id))[0]?.displayStatus === "stopped",
			"the run shown stopped",
		);
	});

	test("the same account attaching with anything but resume first ends what was kept", async () => {
		const { f, doc, socket, drop, decisionStatus } = await asking({ ...RESUMABLE, run: true });
		await drop(socket);
		const second = await reattach(f, doc.id);
		second.send({ type: "runs", session: "fresh", active: [], paused: [], cards: [] });
		await f.until(async () => (await decisionStatus()) === "withdrawn", "the Decision withdrawn");
		await f.until(
			async () => (await f.ctx.domain.runs.list(doc.id))[0]?.displayStatus === "stopped",
			"the run shown stopped",
		);
	});

	test("a client that does not offer the feature attaching over kept work ends it", async () => {
		const { f, doc, socket, drop, decisionStatus } = await asking();
		await drop(socket);
		await reattach(f, doc.id, { features: "" });
		await f.until(async () => (await decisionStatus()) === "withdrawn", "the Decision withdrawn");
	});

	test("an answer given while the link was down reaches the Planner once, as its own turn, if the client does not resume", async () => {
		const { f, doc, socket, answer, drop } = await asking();
		await drop(socket);
		await answer("PostgreSQL");
		const second = await reattach(f, doc.id);
		second.send({ type: "runs", session: "fresh", active: [], paused: [], cards: [] });
		const start = await second.expect("start");
		second.send({ type: "started", session: start.session });
		const turn = await second.expect("turn");
		expect(turn.prompt).toContain("Chopin (automatic follow-up)");
		expect(turn.prompt).toContain("Which store?");
		expect(turn.prompt).toContain("@bob answered");
		expect(turn.prompt).toContain("PostgreSQL");
		second.send({ type: "turn-end", session: start.session, turn: turn.turn, status: "finished" });
		await f.until(() => f.ctx.planner.status(doc.id).state === "attached", "idle again");
		await f.sync(second);
		expect(second.pending.filter((m) => m.type === "turn" || m.type === "start")).toEqual([]);
	});

	test("run cards keep their status and say disconnected while the link is down, and not after the resume", async () => {
		const { f, doc, socket, session, drop } = await asking({ ...RESUMABLE, run: true });
		await drop(socket);
		await f.until(
			async () => (await f.ctx.domain.runs.list(doc.id))[0]?.disconnected === true,
			"disconnected",
		);
		expect((await f.ctx.domain.runs.list(doc.id))[0]).toMatchObject({ displayStatus: "running", live: true });
		const second = await reattach(f, doc.id);
		second.send({ type: "resume", sessions: [{ session, requests: ["q1"] }] });
		await second.expect("resumed");
		await f.until(
			async () => (await f.ctx.domain.runs.list(doc.id))[0]?.disconnected === undefined,
			"connected",
		);
	});

	test("a Stop pressed while the link is down is held, said in Chat, and sent once first after resumed", async () => {
		const { f, doc, socket, session, drop, answer } = await asking({ ...RESUMABLE, run: true });
		await drop(socket);
		await answer();
		f.ctx.planner.control(doc.id, "stop", "bob");
		f.ctx.planner.control(doc.id, "stop", "bob");
		f.ctx.planner.control(doc.id, "resume", "bob");
		await f.until(async () => (await f.chat(doc.id)).some((m) => m.body === wording.stopHeld("bob")), "held");
		await f.until(
			async () => (await f.chat(doc.id)).some((m) => m.body === wording.resumeNotHeld("bob")),
			"not held",
		);
		const second = await reattach(f, doc.id);
		second.send({ type: "resume", sessions: [{ session, requests: ["q1"] }] });
		await second.expect("resumed");
		// The Stop comes before anything else, once however often it was pressed; then the held answer.
		const stop = await second.expect("stop");
		expect(stop).toMatchObject({ type: "stop", session });
		expect(stop.run).toBeUndefined();
		expect(await second.expect("input-result")).toMatchObject({ request: "q1" });
		second.send({ type: "control-result", request: stop.request, ok: true });
		await f.until(
			async () => (await f.chat(doc.id)).some((m) => m.body === wording.stopConfirmedLate()),
			"the Stop confirmed",
		);
		// Answered: it is not sent again after another drop.
		second.send({ type: "input-received", request: "q1" });
		await f.sync(second);
		await drop(second);
		const third = await reattach(f, doc.id);
		third.send({ type: "resume", sessions: [{ session, requests: [] }] });
		expect(await third.expect("resumed")).toEqual({ type: "resumed", sessions: [{ session, requests: [] }] });
		await f.sync(third);
		expect(third.pending.filter((m) => m.type === "stop")).toEqual([]);
	});

	test("a Stop sent whose answer had not come when the link dropped is owed and sent again", async () => {
		const { f, doc, socket, session, drop } = await asking({ ...RESUMABLE, run: true });
		f.ctx.planner.control(doc.id, "stop", "bob");
		const first = await socket.expect("stop");
		await drop(socket);
		await f.until(async () => (await f.chat(doc.id)).some((m) => m.body === wording.stopHeld("bob")), "held");
		const second = await reattach(f, doc.id);
		second.send({ type: "resume", sessions: [{ session, requests: ["q1"] }] });
		await second.expect("resumed");
		const again = await second.expect("stop");
		expect(again.session).toBe(session);
		expect(again.request).not.toBe(first.request);
	});

	test("Stop on a disconnected Planner that only waits on a question withdraws it and ends what was kept", async () => {
		const { f, doc, socket, session, drop, decisionStatus } = await asking();
		await drop(socket);
		expect(f.ctx.planner.control(doc.id, "stop", "bob")).toEqual({ sent: 0 });
		await f.until(async () => (await decisionStatus()) === "withdrawn", "the Decision withdrawn");
		expect(f.ctx.planner.status(doc.id).state).toBe("grace");
		expect((await f.chat(doc.id)).some((m) => m.body === wording.stopWithdrewQuestions("bob"))).toBe(true);
		const second = await reattach(f, doc.id);
		second.send({ type: "resume", sessions: [{ session, requests: ["q1"] }] });
		expect(await second.expect("resumed")).toEqual({ type: "resumed", sessions: [] });
	});

	test("a reset ends a disconnected Planner for good: its question is withdrawn and nothing resumes", async () => {
		const { f, doc, socket, session, drop, decisionStatus } = await asking();
		await drop(socket);
		expect(f.ctx.planner.reset(doc.id)).toBe(true);
		await f.until(async () => (await decisionStatus()) === "withdrawn", "the Decision withdrawn");
		expect(f.ctx.planner.status(doc.id).state).toBe("unattached");
		const second = await reattach(f, doc.id);
		second.send({ type: "resume", sessions: [{ session, requests: ["q1"] }] });
		expect(await second.expect("resumed")).toEqual({ type: "resumed", sessions: [] });
	});

	test("a detach ends everything even with the feature", async () => {
		const { f, doc, socket, decisionStatus } = await asking();
		socket.send({ type: "detach" });
		await f.until(async () => (await decisionStatus()) === "withdrawn", "the Decision withdrawn");
		expect(f.ctx.planner.status(doc.id).state).toBe("grace");
	});

	test("resume after the first message is a protocol violation", async () => {
		const { socket } = await asking();
		socket.send({ type: "resume", sessions: [] });
		expect(await socket.nextOf("error")).toMatchObject({ code: "protocol" });
	});
});

describe("the same account's own dead link", () => {
	test("a new link whose first message resumes a session the attached link holds takes its work over", async () => {
		const { f, doc, session, decisionStatus } = await asking();
		// The old socket is still open as far as the server knows.
		const second = await reattach(f, doc.id);
		second.send({ type: "resume", sessions: [{ session, requests: ["q1"] }] });
		expect(await second.expect("resumed")).toEqual({
			type: "resumed",
			sessions: [{ session, requests: ["q1"] }],
		});
		expect(f.ctx.planner.connections()).toBe(1);
		expect(await decisionStatus()).toBe("open");
		expect(f.ctx.planner.status(doc.id)).toEqual({ state: "attached", login: "alice" });
	});

	test("anything else first is refused planner-attached after attached, and the attached link is untouched", async () => {
		const { f, doc, socket, session } = await asking();
		const second = await reattach(f, doc.id);
		second.send({ type: "resume", sessions: [{ session: "not-held", requests: [] }] });
		expect(await second.expect("refused")).toMatchObject({ code: "planner-attached" });
		// The first link still answers.
		await f.sync(socket);
		expect(f.ctx.planner.status(doc.id).state).toBe("attached");
		expect(session).toBeTruthy();
	});

	test("another account is refused planner-attached at once", async () => {
		const { f, doc } = await asking();
		await f.signIn("bob");
		const other = await f.connect("bob", RESUMABLE);
		other.send({ type: "attach", version: 1, document: doc.id });
		expect(await other.expect("refused")).toMatchObject({ code: "planner-attached" });
	});
});

describe("restart-notice", () => {
	test("a server stopping tells a link that asked with restarting, then closes it 1012", async () => {
		f = await AgentFixture.start();
		const doc = await f.createDocument();
		await f.signIn("alice");
		const { socket, attached } = await f.attach("alice", doc.id, { features: "restart-notice" });
		expect(attached.features).toEqual(["restart-notice"]);
		await f.ctx.planner.stop();
		expect(await socket.expect("restarting")).toEqual({
			type: "restarting",
			reconnectWithinMs: f.ctx.config.handoverPlannerWindowMs,
		});
		expect((await socket.closed).code).toBe(1012);
	});

	test("a link that did not ask sees only the 1012 close", async () => {
		f = await AgentFixture.start();
		const doc = await f.createDocument();
		await f.signIn("alice");
		const { socket } = await f.attach("alice", doc.id);
		await f.ctx.planner.stop();
		expect((await socket.closed).code).toBe(1012);
		expect(socket.pending).toEqual([]);
	});
});
