// Spec steer-turn ("steer", "control-result"): an @chopin message while the Planner works is posted and steered
// into its running turn, answered within 10 seconds; a refusal, no answer in time or a closed link is said in
// Chat; without the feature the message is refused with the spec's sentence and no steer is ever sent.
import { afterEach, describe, expect, test } from "bun:test";
import { AgentFixture } from "../testing/agent-fixture";
import type { AgentSocket } from "../testing/agent-socket";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

async function working(features?: string) {
	f = await AgentFixture.start();
	const doc = await f.createDocument();
	await f.signIn("alice");
	const { socket, attached } = await f.attach("alice", doc.id, features ? { features } : {});
	const turn = await f.chatTurn(socket, doc.id, "bob");
	const notices = async () => (await f!.chat(doc.id)).filter((m) => m.role === "system").map((m) => m.body);
	const send = (body = "@chopin also check the docs") =>
		f!.ctx.planner.handleMessage({ documentId: doc.id, author: "carol", body });
	return { f, socket, attached, turn, notices, send, documentId: doc.id };
}

/** Waits until the server has read what the socket sent, then lets the notices it posts be stored. */
async function settle(f: AgentFixture, socket: AgentSocket) {
	await f.sync(socket);
	await f.ctx.planner.settled();
}

describe("with steer-turn", () => {
	test("the message is posted and steered into the running turn; a prompt in the sender's voice; ok says nothing more", async () => {
		const { f, socket, attached, turn, notices, send, documentId } = await working("steer-turn");
		expect(attached.features).toEqual(["steer-turn"]);
		const result = await send();
		expect(result).toMatchObject({
			status: "sent",
			turn: false,
			steered: true,
			message: { authorLogin: "carol", body: "@chopin also check the docs" },
		});
		const steer = await socket.expect("steer");
		expect(steer).toEqual({
			type: "steer",
			request: steer.request,
			session: turn.session,
			turn: turn.turn,
			prompt: "@carol: @chopin also check the docs",
		});
		socket.send({ type: "control-result", request: steer.request, ok: true });
		await settle(f, socket);
		await f.clock.advance(10_000);
		await settle(f, socket);
		expect(await notices()).toEqual([]);
		expect((await f.chat(documentId)).map((m) => m.body)).toContain("@chopin also check the docs");
		// The Planner still works on the one turn: no second session was started for the message.
		expect(socket.received.filter((m) => m.type === "start")).toHaveLength(1);
		expect(f.ctx.planner.status(documentId).state).toBe("working");
	});

	test("a refusal is final: Chat says the message was not read, with the client's reason", async () => {
		const { f, socket, notices, send } = await working("steer-turn");
		await send();
		const steer = await socket.expect("steer");
		socket.send({
			type: "control-result",
			request: steer.request,
			ok: false,
			message: "The turn has ended.",
		});
		await f.until(async () => (await notices()).length === 1, "the notice");
		expect(await notices()).toEqual(["chopin did not read @carol's message: The turn has ended."]);
		await f.clock.advance(10_000);
		await settle(f, socket);
		expect(await notices()).toHaveLength(1);
	});

	test("no control-result within 10 seconds: Chat says it may not have been read; a late ok says it was", async () => {
		const { f, socket, notices, send } = await working("steer-turn");
		await send();
		const steer = await socket.expect("steer");
		await f.clock.advance(9_999);
		await settle(f, socket);
		expect(await notices()).toEqual([]);
		await f.clock.advance(1);
		await f.until(async () => (await notices()).length === 1, "the notice");
		expect(await notices()).toEqual([
			"chopin has not confirmed that it read @carol's message, so it may not have.",
		]);
		socket.send({ type: "control-result", request: steer.request, ok: true });
		await f.until(async () => (await notices()).length === 2, "the late confirmation");
		expect((await notices())[1]).toBe("chopin confirmed that it read @carol's message.");
	});

	test("the link closing before the answer: Chat says the message may not have been read", async () => {
		const { f, socket, notices, send } = await working("steer-turn");
		await send();
		await socket.expect("steer");
		socket.terminate();
		await f.until(async () => (await notices()).length === 1, "the notice");
		expect(await notices()).toEqual([
			"chopin may not have read @carol's message: the agent connection closed before it answered.",
		]);
	});

	test("while the turn's session is still starting there is nothing to steer: refused, not posted", async () => {
		f = await AgentFixture.start();
		const doc = await f.createDocument();
		await f.signIn("alice");
		const { socket } = await f.attach("alice", doc.id, { features: "steer-turn" });
		await f.ctx.planner.handleMessage({ documentId: doc.id, author: "bob", body: "@chopin go" });
		await socket.expect("start");
		expect(
			await f.ctx.planner.handleMessage({ documentId: doc.id, author: "carol", body: "@chopin wait" }),
		).toEqual({
			status: "refused",
			code: "planner-busy",
			message:
				"chopin can't take this message just now: its reply is starting or stopping. Send it again in a moment.",
		});
		const people = (await f.chat(doc.id)).filter((m) => m.role === "person");
		expect(people.map((m) => m.body)).toEqual(["@chopin go"]);
	});

	test("a control-result for a steer never counts as a Stop's answer, nor a Stop's as a steer's", async () => {
		const { f, socket, notices, send, documentId } = await working("steer-turn");
		const bob = await f.signIn("bob");
		await send();
		const steer = await socket.expect("steer");
		await f.request("POST", `/api/documents/${documentId}/planner/stop`, undefined, bob);
		// Stop aborts the running turn, then asks the session to stop.
		await socket.expect("abort");
		const stop = await socket.expect("stop");
		socket.send({ type: "control-result", request: stop.request, ok: true });
		await f.until(async () => (await notices()).length === 1, "the Stop notice");
		expect(await notices()).toEqual(["chopin stopped, as @bob asked."]);
		socket.send({ type: "control-result", request: steer.request, ok: false, message: "Stopped." });
		await f.until(async () => (await notices()).length === 2, "the steer notice");
		expect((await notices())[1]).toBe("chopin did not read @carol's message: Stopped.");
	});
});

describe("without steer-turn", () => {
	test("the message is refused with the spec's sentence, not posted, and the client never sees a steer", async () => {
		const { f, socket, attached, send, documentId } = await working("run-stage-deltas");
		expect(attached.features).toEqual(["run-stage-deltas"]);
		expect(await send()).toEqual({
			status: "refused",
			code: "planner-busy",
			message: "chopin can't take messages while it works on this machine. Stop it to ask now.",
		});
		await settle(f, socket);
		expect(socket.received.map((m) => m.type)).not.toContain("steer");
		expect((await f.chat(documentId)).map((m) => m.body)).not.toContain("@chopin also check the docs");
	});
});
