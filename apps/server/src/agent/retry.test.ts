// Spec "Retrying a failed turn" (retry-turn) and Chat's Retry: the sender presses Retry on a failed reply, the
// failed attempt (partial text, tool rows, failure line) leaves Chat for everyone, over the live events too, and
// the same message runs again; with retry-turn every turn a person's message began names it, and the retry says
// retry: true; without it neither field is ever sent.
import { afterEach, describe, expect, test } from "bun:test";
import type { LiveEvent } from "../live/events";
import { AgentFixture } from "../testing/agent-fixture";
import type { AgentSocket } from "../testing/agent-socket";
import type { CookieJar } from "../testing/sign-in";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

/** bob's @chopin message whose reply streamed some text and a tool row, then failed. */
async function failedReply(features?: string) {
	f = await AgentFixture.start();
	const doc = await f.createDocument();
	await f.signIn("alice");
	const bob = await f.signIn("bob");
	const { socket } = await f.attach("alice", doc.id, features ? { features } : {});
	const first = await f.chatTurn(socket, doc.id, "bob", "@chopin plan the rollout");
	const part = (part: unknown) => ({ type: "part", session: first.session, turn: first.turn, part });
	socket.sendBatch([
		{ type: "tools", session: first.session, turn: first.turn, names: ["search"] },
		part({ type: "text-delta", id: "t", delta: "Half an answer" }),
		part({ type: "tool-call", toolCallId: "c1", toolName: "search", input: "{}", providerExecuted: true }),
	]);
	await f.sync(socket);
	socket.send({
		type: "turn-end",
		session: first.session,
		turn: first.turn,
		status: "failed",
		message: "The provider is down.",
	});
	await f.until(
		async () => (await f!.chat(doc.id)).some((m) => m.role === "planner" && m.status === "failed"),
		"the reply to fail",
	);
	// A failed turn's session is destroyed: a retry runs in a fresh one.
	expect(await socket.expect("destroy")).toMatchObject({ session: first.session });
	await f.ctx.planner.settled();
	const reply = (await f.chat(doc.id)).find((m) => m.role === "planner")!;
	expect(reply).toMatchObject({
		body: "Half an answer",
		error: "The provider is down.",
		tools: [{ name: "search" }],
	});
	const retry = (jar: CookieJar = bob, replyId = reply.id) =>
		f!.request("POST", `/api/documents/${doc.id}/messages/${replyId}/retry`, undefined, jar);
	return { f, socket, first, reply, retry, bob, documentId: doc.id };
}

/** The retried turn: start answered, then its turn frame. */
async function nextTurn(socket: AgentSocket) {
	const start = await socket.expect("start");
	socket.send({ type: "started", session: start.session });
	return socket.expect("turn");
}

describe("with retry-turn", () => {
	test("Retry takes the failed attempt out for everyone and runs the same message again with message and retry", async () => {
		const { f, socket, first, reply, retry, documentId } = await failedReply("retry-turn");
		// Every turn a person's message began names it, without retry.
		const firstFrame = socket.received.find((m) => m.type === "turn")!;
		expect(firstFrame).toMatchObject({ message: first.message.id });
		expect("retry" in firstFrame).toBe(false);

		const events: LiveEvent[] = f.events(documentId);
		const res = await retry();
		expect(res.status).toBe(202);
		expect(((await res.json()) as { message: { id: string } }).message.id).toBe(first.message.id);
		const turn = await nextTurn(socket);
		expect(turn).toMatchObject({
			prompt: "@bob: @chopin plan the rollout",
			message: first.message.id,
			retry: true,
		});
		// The model reads the message once (the prompt) and nothing of the failed attempt.
		expect(turn.instructions).not.toContain("Half an answer");
		expect(turn.instructions).not.toContain("The provider is down.");
		expect(turn.instructions).not.toContain("plan the rollout");

		expect(events.find((e) => e.type === "message.deleted")).toEqual({
			type: "message.deleted",
			documentId,
			messageId: reply.id,
		});
		const types = events.filter((e) => e.type.startsWith("message.")).map((e) => e.type);
		expect(types.slice(0, 2)).toEqual(["message.deleted", "message.created"]);

		socket.send({
			type: "part",
			session: turn.session,
			turn: turn.turn,
			part: { type: "text-delta", id: "t", delta: "The whole answer" },
		});
		socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
		await f.until(async () => (await f.chat(documentId)).at(-1)?.status === "done", "the new reply");
		const chat = await f.chat(documentId);
		// One message, one reply: the failed one is gone, its tool rows with it.
		expect(chat.map((m) => [m.role, m.body, m.status])).toEqual([
			["person", "@chopin plan the rollout", "done"],
			["planner", "The whole answer", "done"],
		]);
		expect(chat[1]!.replyTo).toBe(first.message.id);
		expect(chat[1]!.tools).toEqual([]);
		await expect(f.ctx.domain.chat.get(reply.id)).rejects.toMatchObject({ code: "message-not-found" });
	});

	test("a turn no person's message began (invoke_planner) names no message, even with the feature", async () => {
		const { f, socket, documentId } = await failedReply("retry-turn");
		const invoked = f.ctx.planner.invoke({
			documentId,
			by: "alice",
			asker: "@alice's coding agent",
			system: false,
			message: "Summarise the plan.",
		});
		const turn = await nextTurn(socket);
		expect(turn.prompt).toContain("Summarise the plan.");
		expect("message" in turn).toBe(false);
		expect("retry" in turn).toBe(false);
		socket.send({
			type: "part",
			session: turn.session,
			turn: turn.turn,
			part: { type: "text-delta", id: "t", delta: "A summary" },
		});
		socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
		expect(await invoked).toMatchObject({ status: "replied" });
	});

	test("only the person who sent the message may retry; a reply that did not fail cannot be", async () => {
		const { f, retry, reply, documentId } = await failedReply("retry-turn");
		const alice = await f.signIn("alice");
		const res = await retry(alice);
		expect(res.status).toBe(403);
		expect(await res.json()).toMatchObject({
			code: "retry-forbidden",
			message: "Only @bob, who sent the message, can retry it.",
		});
		const notReply = (await f.chat(documentId))[0]!;
		const wrong = await retry(undefined, notReply.id);
		expect(wrong.status).toBe(409);
		expect((await wrong.json()).code).toBe("message-not-retryable");
		expect((await retry(undefined, "no-such-message")).status).toBe(404);
		expect((await f.chat(documentId)).map((m) => m.id)).toContain(reply.id);
	});

	test("a Retry the Planner cannot take is refused and changes nothing", async () => {
		const { f, socket, retry, reply, documentId } = await failedReply("retry-turn");
		await f.chatTurn(socket, documentId, "carol", "@chopin something else");
		const res = await retry();
		expect(res.status).toBe(409);
		expect((await res.json()).code).toBe("planner-busy");
		expect((await f.chat(documentId)).find((m) => m.id === reply.id)?.status).toBe("failed");
	});
});

describe("without retry-turn", () => {
	test("Retry still runs the message again in a fresh session, but no turn ever carries message or retry", async () => {
		const { f, socket, reply, retry, documentId } = await failedReply();
		const res = await retry();
		expect(res.status).toBe(202);
		const turn = await nextTurn(socket);
		expect(turn.prompt).toBe("@bob: @chopin plan the rollout");
		expect(turn.instructions).not.toContain("Half an answer");
		for (const frame of socket.received.filter((m) => m.type === "turn")) {
			expect("message" in frame).toBe(false);
			expect("retry" in frame).toBe(false);
		}
		expect((await f.chat(documentId)).map((m) => m.id)).not.toContain(reply.id);
	});
});
