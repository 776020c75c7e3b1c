// Spec "fork" (session-forks) and Chat's threads: a thread's @chopin message forks the Planner session that
// answered the thread's newest point (its own earlier turn, else its root's) and reads only what the thread gained
// since; start-failed, a client without the feature, or a root no turn finished, start afresh with the transcript up
// to the thread's root, then the thread. A thread forked from a retried message branches from the retried turn.
import { afterEach, describe, expect, test } from "bun:test";
import type { MessageView } from "../chat/message-view";
import { AgentFixture } from "../testing/agent-fixture";
import type { AgentSocket } from "../testing/agent-socket";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

async function setup(features?: string) {
	f = await AgentFixture.start();
	const doc = await f.createDocument();
	await f.signIn("alice");
	const bob = await f.signIn("bob");
	const { socket } = await f.attach("alice", doc.id, features ? { features } : {});
	return { f, socket, documentId: doc.id, bob };
}

type Turn = { session: string; turn: string };

/** Streams the reply's text and finishes the turn; resolves once the server has ended it (and destroyed its session). */
async function answer(f: AgentFixture, socket: AgentSocket, of: Turn, text: string): Promise<void> {
	const turn = { session: of.session, turn: of.turn };
	socket.send({ ...turn, type: "part", part: { type: "text-delta", id: "t", delta: text } });
	socket.send({ ...turn, type: "turn-end", status: "finished" });
	expect(await socket.expect("destroy")).toMatchObject({ session: turn.session });
	await f.ctx.planner.settled();
}

/** A person's message in a thread, through the Planner service as the Chat API calls it. */
async function inThread(f: AgentFixture, documentId: string, author: string, thread: string, body: string) {
	const result = await f.ctx.planner.handleMessage({ documentId, author, body, thread });
	if (result.status !== "sent") throw new Error(`refused: ${JSON.stringify(result)}`);
	return result.message;
}

function threadOf(f: AgentFixture, documentId: string, root: string): Promise<MessageView[]> {
	return f.ctx.domain.chat.list(documentId, { thread: root }).then((page) => page.messages);
}

describe("with session-forks", () => {
	test("a thread's first @chopin message forks the session that answered its root; its next forks the thread's turn", async () => {
		const { f, socket, documentId } = await setup("session-forks");
		const main = await f.chatTurn(socket, documentId, "bob", "@chopin plan the rollout");
		await answer(f, socket, main, "Plan A: ship on Monday.");
		const root = main.message;

		// A message without a mention is posted in the thread; the next one asks the Planner there.
		await inThread(f, documentId, "alice", root.id, "I prefer Tuesday.");
		const asked = await inThread(f, documentId, "alice", root.id, "@chopin can it be Tuesday?");
		const fork = await socket.expect("fork");
		expect(fork).toEqual({
			type: "fork",
			session: expect.any(String),
			mode: "planner",
			from: { session: main.session, turn: main.turn },
		});
		expect(fork.session).not.toBe(main.session);
		socket.send({ type: "started", session: fork.session });
		const turn = await socket.expect("turn");
		expect(turn).toMatchObject({ session: fork.session, prompt: "@alice: @chopin can it be Tuesday?" });
		// The conversation up to the fork point is the session's own: only the thread's new lines are given.
		expect(turn.instructions).toContain("@bob: @chopin plan the rollout");
		expect(turn.instructions).toContain("Written in the thread since you last answered there:");
		expect(turn.instructions).toContain("@alice: I prefer Tuesday.");
		expect(turn.instructions).not.toContain("Plan A");
		await answer(f, socket, turn, "Tuesday works.");

		// The reply is in the thread; the main Chat holds the root and its reply only, the root counts its thread.
		const thread = await threadOf(f, documentId, root.id);
		expect(thread.map((m) => [m.role, m.body, m.threadRoot])).toEqual([
			["person", "I prefer Tuesday.", root.id],
			["person", "@chopin can it be Tuesday?", root.id],
			["planner", "Tuesday works.", root.id],
		]);
		expect(thread[2]!.replyTo).toBe(asked.id);
		const chat = await f.chat(documentId);
		expect(chat.map((m) => m.body)).toEqual(["@chopin plan the rollout", "Plan A: ship on Monday."]);
		expect(chat[0]!.threadReplies).toBe(3);

		// The thread's next turn branches from the thread's own last turn, and reads nothing already answered.
		await inThread(f, documentId, "bob", root.id, "@chopin and the release notes?");
		const next = await socket.expect("fork");
		expect(next.from).toEqual({ session: turn.session, turn: turn.turn });
		socket.send({ type: "started", session: next.session });
		const nextTurn = await socket.expect("turn");
		expect(nextTurn.instructions).not.toContain("I prefer Tuesday.");
		expect(nextTurn.instructions).not.toContain("Written in the thread");
		await answer(f, socket, nextTurn, "Notes follow.");

		// A later main-Chat turn starts afresh and its transcript leaves the thread out.
		await f.chatTurn(socket, documentId, "bob", "@chopin anything else?").then((t) => {
			expect(t.instructions).toContain("Plan A: ship on Monday.");
			expect(t.instructions).not.toContain("Tuesday");
		});
	});

	test("a thread on the Planner's reply forks the turn that wrote it", async () => {
		const { f, socket, documentId } = await setup("session-forks");
		const main = await f.chatTurn(socket, documentId, "bob", "@chopin plan it");
		await answer(f, socket, main, "Here is the plan.");
		const reply = (await f.chat(documentId)).find((m) => m.role === "planner")!;
		await inThread(f, documentId, "bob", reply.id, "@chopin why Monday?");
		const fork = await socket.expect("fork");
		expect(fork.from).toEqual({ session: main.session, turn: main.turn });
		socket.send({ type: "started", session: fork.session });
		const turn = await socket.expect("turn");
		expect(turn.instructions).toContain("@chopin: Here is the plan.");
		await answer(f, socket, turn, "Because.");
		expect((await threadOf(f, documentId, reply.id)).map((m) => m.body)).toEqual([
			"@chopin why Monday?",
			"Because.",
		]);
	});

	test("start-failed on a fork: destroy, then start with the transcript up to the thread's root and the thread", async () => {
		const { f, socket, documentId } = await setup("session-forks");
		const first = await f.chatTurn(socket, documentId, "bob", "@chopin first question");
		await answer(f, socket, first, "First answer.");
		const second = await f.chatTurn(socket, documentId, "bob", "@chopin second question");
		await answer(f, socket, second, "Second answer.");

		await inThread(f, documentId, "alice", first.message.id, "A note in the thread.");
		await inThread(f, documentId, "alice", first.message.id, "@chopin go deeper");
		const fork = await socket.expect("fork");
		expect(fork.from).toEqual({ session: first.session, turn: first.turn });
		socket.send({ type: "start-failed", session: fork.session, message: "That session is no longer held." });
		expect(await socket.expect("destroy")).toEqual({ type: "destroy", session: fork.session });
		const start = await socket.expect("start");
		expect(start.mode).toBe("planner");
		socket.send({ type: "started", session: start.session });
		const turn = await socket.expect("turn");
		expect(turn.session).toBe(start.session);
		// Up to the root and its reply, then the thread: nothing of the main Chat after the root.
		expect(turn.instructions).toContain("You answer in a thread of the Chat, on this message:");
		expect(turn.instructions).toContain("@bob: @chopin first question");
		expect(turn.instructions).toContain("@chopin: First answer.");
		expect(turn.instructions).toContain("@alice: A note in the thread.");
		expect(turn.instructions).not.toContain("second question");
		expect(turn.instructions).not.toContain("Second answer.");
		await answer(f, socket, turn, "Deeper.");
		expect((await threadOf(f, documentId, first.message.id)).at(-1)).toMatchObject({
			role: "planner",
			body: "Deeper.",
			status: "done",
		});
	});

	test("a root no turn answered has nothing to fork: the thread starts afresh", async () => {
		const { f, socket, documentId } = await setup("session-forks");
		const root = await f.ctx.domain.chat.post(documentId, { author: "bob", body: "Shall we ship?" });
		await inThread(f, documentId, "alice", root.message.id, "@chopin what do you think?");
		const start = await socket.expect("start");
		socket.send({ type: "started", session: start.session });
		const turn = await socket.expect("turn");
		expect(turn.instructions).toContain("@bob: Shall we ship?");
		expect(socket.received.some((m) => m.type === "fork")).toBe(false);
	});

	test("a thread forked from a retried message branches from the retried turn, never the failed one", async () => {
		const { f, socket, documentId, bob } = await setup("session-forks, retry-turn");
		const failed = await f.chatTurn(socket, documentId, "bob", "@chopin plan the rollout");
		socket.send({
			type: "turn-end",
			session: failed.session,
			turn: failed.turn,
			status: "failed",
			message: "Down.",
		});
		expect(await socket.expect("destroy")).toMatchObject({ session: failed.session });
		await f.ctx.planner.settled();
		const reply = (await f.chat(documentId)).find((m) => m.role === "planner")!;
		const res = await f.request(
			"POST",
			`/api/documents/${documentId}/messages/${reply.id}/retry`,
			undefined,
			bob,
		);
		expect(res.status).toBe(202);
		const start = await socket.expect("start");
		socket.send({ type: "started", session: start.session });
		const retried = await socket.expect("turn");
		expect(retried.retry).toBe(true);
		await answer(f, socket, retried, "The whole plan.");

		await inThread(f, documentId, "alice", failed.message.id, "@chopin more detail?");
		const fork = await socket.expect("fork");
		expect(fork.from).toEqual({ session: retried.session, turn: retried.turn });
	});

	test("while a main turn runs, a thread's @chopin message is refused as busy, never steered into it", async () => {
		const { f, socket, documentId } = await setup("session-forks, steer-turn");
		const main = await f.chatTurn(socket, documentId, "bob", "@chopin long task");
		const root = await f.ctx.domain.chat.post(documentId, { author: "alice", body: "Side topic" });
		const result = await f.ctx.planner.handleMessage({
			documentId,
			author: "alice",
			body: "@chopin a side question",
			thread: root.message.id,
		});
		expect(result).toMatchObject({ status: "refused", code: "planner-busy" });
		expect(socket.received.some((m) => m.type === "steer")).toBe(false);
		expect(await threadOf(f, documentId, root.message.id)).toEqual([]);
		await answer(f, socket, main, "Done.");
	});
	test("while a thread's turn runs, a message of that thread is steered into it; a main-Chat one is refused", async () => {
		const { f, socket, documentId } = await setup("session-forks, steer-turn");
		const root = await f.ctx.domain.chat.post(documentId, { author: "alice", body: "Side topic" });
		await inThread(f, documentId, "alice", root.message.id, "@chopin look into it");
		const start = await socket.expect("start");
		socket.send({ type: "started", session: start.session });
		const turn = await socket.expect("turn");
		const main = await f.ctx.planner.handleMessage({ documentId, author: "bob", body: "@chopin unrelated" });
		expect(main).toMatchObject({ status: "refused", code: "planner-busy" });
		await inThread(f, documentId, "bob", root.message.id, "@chopin check the tests too");
		expect(await socket.expect("steer")).toMatchObject({
			session: turn.session,
			turn: turn.turn,
			prompt: "@bob: @chopin check the tests too",
		});
	});
});

describe("without session-forks", () => {
	test("fork is never sent: a thread's turn starts with the transcript up to its root, then the thread", async () => {
		const { f, socket, documentId } = await setup();
		const first = await f.chatTurn(socket, documentId, "bob", "@chopin first question");
		await answer(f, socket, first, "First answer.");
		const second = await f.chatTurn(socket, documentId, "bob", "@chopin second question");
		await answer(f, socket, second, "Second answer.");
		await inThread(f, documentId, "alice", first.message.id, "@chopin go deeper");
		const start = await socket.expect("start");
		socket.send({ type: "started", session: start.session });
		const turn = await socket.expect("turn");
		expect(turn.instructions).toContain("@chopin: First answer.");
		expect(turn.instructions).not.toContain("Second answer.");
		await answer(f, socket, turn, "Deeper.");
		expect(socket.received.some((m) => m.type === "fork")).toBe(false);
		expect((await threadOf(f, documentId, first.message.id)).map((m) => m.body)).toEqual([
			"@chopin go deeper",
			"Deeper.",
		]);
	});
});

describe("threads over HTTP", () => {
	test("a thread's root must be a top-level message of the document; commands stay on the main Chat", async () => {
		const { f, socket, documentId, bob } = await setup("session-forks");
		const main = await f.chatTurn(socket, documentId, "bob", "@chopin hello");
		await answer(f, socket, main, "Hi.");
		const post = (body: unknown) => f.request("POST", `/api/documents/${documentId}/messages`, body, bob);
		const ok = await post({ body: "In the thread", thread: main.message.id });
		expect(ok.status).toBe(201);
		const inside = ((await ok.json()) as { message: MessageView }).message;
		expect(inside.threadRoot).toBe(main.message.id);

		const nested = await post({ body: "Deeper", thread: inside.id });
		expect(nested.status).toBe(409);
		expect(await nested.json()).toMatchObject({ code: "thread-root-invalid" });
		const unknown = await post({ body: "Lost", thread: "no-such-message" });
		expect(unknown.status).toBe(404);
		expect(await unknown.json()).toMatchObject({ code: "thread-root-invalid" });
		const notice = await f.ctx.domain.chat.postNotice(documentId, "A notice.");
		expect((await post({ body: "On a notice", thread: notice.id })).status).toBe(409);
		const command = await post({
			body: "",
			command: { name: "compact", kind: "prompt" },
			thread: main.message.id,
		});
		expect(command.status).toBe(409);
		expect(await command.json()).toMatchObject({ code: "command-in-thread" });

		const page = await f.request(
			"GET",
			`/api/documents/${documentId}/messages?thread=${main.message.id}`,
			undefined,
			bob,
		);
		expect(((await page.json()) as { messages: MessageView[] }).messages.map((m) => m.body)).toEqual([
			"In the thread",
		]);
		const mainPage = await f.request("GET", `/api/documents/${documentId}/messages`, undefined, bob);
		const listed = ((await mainPage.json()) as { messages: MessageView[] }).messages;
		expect(listed.map((m) => m.body)).toEqual(["@chopin hello", "Hi.", "A notice."]);
		expect(listed[0]!.threadReplies).toBe(1);
	});
});
