// Spec "Server to client" and "Client to server" for sessions and turns: start answered within 10 seconds,
// the turn's tools, instructions and model, turn-end exactly once, abort with its 10-second fallback,
// destroy, and messages for ended sessions and turns.
import { afterEach, describe, expect, test } from "bun:test";
import { AgentFixture } from "../testing/agent-fixture";
import type { AgentSocket } from "../testing/agent-socket";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

async function attached(env: Record<string, string> = {}) {
	f = await AgentFixture.start({ env });
	const doc = await f.createDocument();
	await f.signIn("alice");
	const { socket } = await f.attach("alice", doc.id);
	return { f, socket, documentId: doc.id };
}

const reply = async (f: AgentFixture, documentId: string) => {
	await f.ctx.planner.settled();
	return (await f.chat(documentId)).find((m) => m.role === "planner");
};

async function replyEnded(f: AgentFixture, documentId: string) {
	await f.until(async () => (await reply(f, documentId))?.status !== "streaming", "the reply to end");
	return (await reply(f, documentId))!;
}

describe("sessions", () => {
	test("a Chat turn starts a planner session; started is answered with the turn", async () => {
		const { f, socket, documentId } = await attached();
		await f.ctx.planner.handleMessage({ documentId, author: "bob", body: "@chopin hi" });
		const start = await socket.expect("start");
		expect(start).toEqual({ type: "start", session: start.session, mode: "planner" });
		socket.send({ type: "started", session: start.session });
		expect((await socket.expect("turn")).session).toBe(start.session);
	});

	test("start-failed: the session gets destroy and the reply fails with the client's message", async () => {
		const { f, socket, documentId } = await attached();
		await f.ctx.planner.handleMessage({ documentId, author: "bob", body: "@chopin hi" });
		const start = await socket.expect("start");
		socket.send({ type: "start-failed", session: start.session, message: "No model is configured." });
		expect(await socket.expect("destroy")).toEqual({ type: "destroy", session: start.session });
		expect(await replyEnded(f, documentId)).toMatchObject({
			status: "failed",
			error: "chopin could not start a session: No model is configured.",
		});
		// The Planner is free again.
		expect(f.ctx.planner.status(documentId).state).toBe("attached");
	});

	test("start not answered within 10 seconds: destroy, and a question asked meanwhile is withdrawn and answered cancelled", async () => {
		const { f, socket, documentId } = await attached();
		await f.ctx.planner.handleMessage({ documentId, author: "bob", body: "@chopin hi" });
		const start = await socket.expect("start");
		socket.send({
			type: "input-request",
			request: "q1",
			session: start.session,
			input: { method: "confirm", title: "Go?", message: "" },
		});
		await f.until(async () => (await f.ctx.domain.decisions.list(documentId)).length === 1, "the Decision");
		await f.clock.advance(9_999);
		expect(socket.pending.length).toBe(0);
		await f.clock.advance(1);
		expect(await socket.expect("destroy")).toEqual({ type: "destroy", session: start.session });
		expect(await socket.expect("input-result")).toEqual({
			type: "input-result",
			request: "q1",
			status: "cancelled",
			value: false,
		});
		const [decision] = await f.ctx.domain.decisions.list(documentId, { all: true });
		expect(decision).toMatchObject({ status: "cancelled", settledReason: "withdrawn" });
		expect(await replyEnded(f, documentId)).toMatchObject({
			status: "failed",
			error: "chopin did not start a session within 10 seconds.",
		});
		// A late started is ignored.
		socket.send({ type: "started", session: start.session });
		await f.sync(socket);
	});
});

describe("turns", () => {
	test("the turn carries the prompt in the sender's voice, the host tools, and instructions with the transcript", async () => {
		const { f, socket, documentId } = await attached({ MODEL: "gpt-test-1" });
		await f.ctx.domain.chat.post(documentId, { author: "carol", body: "We should ship on Friday." });
		const turn = await f.chatTurn(socket, documentId, "bob", "@chopin what do you think?");
		expect(turn.prompt).toBe("@bob: @chopin what do you think?");
		expect(turn.model).toBe("gpt-test-1");
		expect(turn.responseFormat).toBeUndefined();
		expect(turn.tools.map((t) => t.name)).toEqual(["read_plan", "read_child", "edit_plan", "open_decisions"]);
		for (const tool of turn.tools) {
			expect(tool.description!.length).toBeGreaterThan(40);
			expect(tool.inputSchema).toMatchObject({ type: "object" });
		}
		expect(turn.instructions).toContain("You are chopin, the Planner");
		expect(turn.instructions).toContain(`/d/${documentId}`);
		expect(turn.instructions).toContain("@carol: We should ship on Friday.");
		// The turn's own message is its prompt, not part of the transcript.
		expect(turn.instructions).not.toContain("what do you think");
	});

	test("without MODEL the turn names no model", async () => {
		const { f, socket, documentId } = await attached();
		const turn = await f.chatTurn(socket, documentId, "bob");
		expect("model" in turn).toBe(false);
	});

	test("turn-end finished: the reply is done, and an idle session is destroyed", async () => {
		const { f, socket, documentId } = await attached();
		const turn = await f.chatTurn(socket, documentId, "bob");
		socket.send({
			type: "part",
			session: turn.session,
			turn: turn.turn,
			part: { type: "text-delta", id: "a", delta: "Done." },
		});
		socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
		expect(await socket.expect("destroy")).toEqual({ type: "destroy", session: turn.session });
		expect(await replyEnded(f, documentId)).toMatchObject({
			status: "done",
			body: "Done.",
			replyTo: turn.message.id,
		});
	});

	test("turn-end failed shows its message as the reply's error line", async () => {
		const { f, socket, documentId } = await attached();
		const turn = await f.chatTurn(socket, documentId, "bob");
		socket.send({
			type: "turn-end",
			session: turn.session,
			turn: turn.turn,
			status: "failed",
			message: "The model is down.",
		});
		expect(await replyEnded(f, documentId)).toMatchObject({ status: "failed", error: "The model is down." });
	});

	test("a second turn-end for a turn is a protocol violation", async () => {
		const { f, socket, documentId } = await attached();
		const turn = await f.chatTurn(socket, documentId, "bob");
		const end = { type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" };
		socket.sendBatch([end, end]);
		expect(await socket.nextOf("error")).toMatchObject({ code: "protocol" });
		expect((await socket.closed).code).toBe(1008);
	});

	test("messages for an ended turn are ignored, except host-tool-call, which gets an error result", async () => {
		const { f, socket, documentId } = await attached();
		const turn = await f.chatTurn(socket, documentId, "bob");
		socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
		await socket.expect("destroy");
		socket.send({
			type: "part",
			session: turn.session,
			turn: turn.turn,
			part: { type: "text-delta", id: "a", delta: "late" },
		});
		socket.send({ type: "tools", session: turn.session, turn: turn.turn, names: ["x"] });
		socket.send({
			type: "host-tool-call",
			session: turn.session,
			turn: turn.turn,
			toolCallId: "c1",
			toolName: "read_plan",
			input: "{}",
		});
		expect(await socket.expect("host-tool-result")).toEqual({
			type: "host-tool-result",
			session: turn.session,
			turn: turn.turn,
			toolCallId: "c1",
			output: { error: "The session has ended." },
			isError: true,
		});
		expect((await replyEnded(f, documentId)).body).toBe("");
	});

	test("a host-tool-call for a turn that ended in a live session: The turn has ended.", async () => {
		const { f, socket, documentId } = await attached();
		const turn = await f.chatTurn(socket, documentId, "bob");
		// A live run keeps the session after its turn.
		socket.send({
			type: "runs",
			session: turn.session,
			active: ["r1"],
			paused: [],
			cards: [{ id: "r1", name: "Build", status: "running", started: 1, updated: 1, stages: [], waiting: 0 }],
		});
		socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
		socket.send({
			type: "host-tool-call",
			session: turn.session,
			turn: turn.turn,
			toolCallId: "c1",
			toolName: "read_plan",
			input: "{}",
		});
		expect(await socket.expect("host-tool-result")).toMatchObject({
			output: { error: "The turn has ended." },
			isError: true,
		});
		await replyEnded(f, documentId);
	});

	test("abort: the client's turn-end aborted ends the turn; without one, the server ends it 10 seconds later", async () => {
		const { f, socket, documentId } = await attached();
		const jar = await f.signIn("bob");
		const first = await f.chatTurn(socket, documentId, "bob");
		expect(
			(await f.request("POST", `/api/documents/${documentId}/planner/stop`, undefined, jar)).status,
		).toBe(202);
		expect(await socket.expect("abort")).toEqual({ type: "abort", session: first.session, turn: first.turn });
		// Stop also pauses the session's workflow runs.
		const stop = await socket.expect("stop");
		socket.send({ type: "control-result", request: stop.request, ok: true });
		socket.send({ type: "turn-end", session: first.session, turn: first.turn, status: "aborted" });
		await socket.expect("destroy");
		expect(await replyEnded(f, documentId)).toMatchObject({
			status: "failed",
			error: "The reply was stopped.",
		});
		await f.ctx.planner.settled();
		await f.until(() => f.ctx.planner.status(documentId).state === "attached", "the Planner to be free");

		const second = await f.chatTurn(socket, documentId, "bob", "@chopin again");
		await f.request("POST", `/api/documents/${documentId}/planner/stop`, undefined, jar);
		await socket.nextOf("abort");
		const again = await socket.expect("stop");
		socket.send({ type: "control-result", request: again.request, ok: true });
		await f.sync(socket);
		await f.clock.advance(10_000);
		await f.until(() => f.ctx.planner.status(documentId).state === "attached", "the turn to end anyway");
		const replies = (await f.chat(documentId)).filter((m) => m.role === "planner");
		expect(replies[1]).toMatchObject({ status: "failed", error: "The reply was stopped." });
		// The client's late turn-end is its first for the turn: ignored, not a violation.
		socket.send({ type: "turn-end", session: second.session, turn: second.turn, status: "aborted" });
		await f.sync(socket);
	});
});

describe("background jobs (isolated sessions)", () => {
	test("an isolated session gets read-only host tools and the job's responseFormat; its text is the result", async () => {
		const { f, socket, documentId } = await attached();
		const responseFormat = { type: "json" as const, schema: { type: "object" }, name: "summary" };
		const job = f.ctx.planner.runJob(documentId, { prompt: "Summarise.", responseFormat });
		const start = await socket.expect("start");
		expect(start.mode).toBe("isolated");
		socket.send({ type: "started", session: start.session });
		const turn = await socket.expect("turn");
		expect(turn.responseFormat).toEqual(responseFormat);
		expect(turn.tools.map((t) => t.name)).toEqual(["read_plan", "read_child", "open_decisions"]);
		const part = (delta: string) => ({
			type: "part",
			session: start.session,
			turn: turn.turn,
			part: { type: "text-delta", id: "t", delta },
		});
		socket.sendBatch([
			part('{"summary":'),
			part('"short"}'),
			{ type: "turn-end", session: start.session, turn: turn.turn, status: "finished" },
		]);
		expect(await job).toEqual({ status: "finished", text: '{"summary":"short"}' });
		expect(await socket.expect("destroy")).toEqual({ type: "destroy", session: start.session });
	});

	test("an isolated session may declare no tools of its own: the turn fails", async () => {
		const { f, socket, documentId } = await attached();
		const job = f.ctx.planner.runJob(documentId, { prompt: "Summarise." });
		const start = await socket.expect("start");
		socket.send({ type: "started", session: start.session });
		const turn = await socket.expect("turn");
		socket.send({ type: "tools", session: start.session, turn: turn.turn, names: ["search"] });
		expect(await socket.expect("abort")).toMatchObject({ turn: turn.turn });
		expect(await job).toEqual({
			status: "failed",
			message: "Tool boundary failure: an isolated session may declare no tools of its own.",
		});
	});
});

export type { AgentSocket };
