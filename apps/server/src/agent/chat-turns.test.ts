// Spec "Without an attached Planner" and hosted-agent's Chat: an @chopin message becomes a turn whose reply
// streams live into Chat; with no Planner, in its grace period, or while it works, the message is refused with
// the spec's words and nothing is kept; a turn interrupted by a drop is never replayed.
import { afterEach, describe, expect, test } from "bun:test";
import type { LiveEvent } from "../live/events";
import { AgentFixture } from "../testing/agent-fixture";
import { FLUSH_WAITS_FOR_TURN_MS } from "./chat-message";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

/** Counts the store's flushes (store.synced()) from now on, each one held until `hold` settles when given. */
function countFlushes(f: AgentFixture, hold?: Promise<void>): { count: number } {
	const flushes = { count: 0 };
	const synced = f.ctx.store.synced;
	f.ctx.store.synced = () => {
		flushes.count++;
		return (hold ?? Promise.resolve()).then(() => synced.call(f.ctx.store));
	};
	return flushes;
}

/**
 * alice's Planner attached, and `post` sending an @chopin message as the signed-in admin's page does (the Chat API),
 * whose answer waits for the message to be on disk.
 */
async function attachedWithSender() {
	const { f, documentId } = await start();
	const jar = await f.signIn(f.cast.admin);
	const { socket } = await f.attach("alice", documentId);
	const post = () => f.request("POST", `/api/documents/${documentId}/messages`, { body: "@chopin go" }, jar);
	return { f, documentId, socket, post };
}

async function start(mode: "local" | "github" = "local") {
	f = await AgentFixture.start({ mode });
	const doc = await f.createDocument();
	await f.signIn(f.cast.admin);
	return { f, documentId: doc.id };
}

describe("@chopin messages", () => {
	test("a message that mentions @chopin outside code becomes a turn; the reply streams live into Chat", async () => {
		const { f, documentId } = await start();
		const { socket } = await f.attach("alice", documentId);
		const events = f.events(documentId);
		const result = await f.ctx.planner.handleMessage({
			documentId,
			author: "bob",
			body: "Hey @chopin, plan the rollout.",
		});
		expect(result).toMatchObject({
			status: "sent",
			turn: true,
			message: { authorLogin: "bob", body: "Hey @chopin, plan the rollout." },
		});
		expect(f.ctx.planner.status(documentId)).toEqual({ state: "working", login: "alice" });
		const begun = await socket.expect("start");
		socket.send({ type: "started", session: begun.session });
		const turn = await socket.expect("turn");
		const part = (delta: string) => ({
			type: "part",
			session: turn.session,
			turn: turn.turn,
			part: { type: "text-delta", id: "t", delta },
		});
		socket.send(part("Step one"));
		await f.until(() => events.some((e) => e.type === "message.delta"), "the first delta");
		socket.send(part(", step two."));
		socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
		await f.until(
			() => events.some((e) => e.type === "message.updated" && e.message.status === "done"),
			"the end",
		);
		const types = events.map((e) => (e.type === "message.created" ? `created:${e.message.role}` : e.type));
		expect(types.filter((t) => t !== "planner.status")).toEqual([
			"created:person",
			"created:planner",
			"message.delta",
			"message.delta",
			"message.updated",
		]);
		const reply = events.find(
			(e): e is Extract<LiveEvent, { type: "message.created" }> =>
				e.type === "message.created" && e.message.role === "planner",
		);
		expect(reply!.message).toMatchObject({
			status: "streaming",
			replyTo: (result as { message: { id: string } }).message.id,
		});
		expect((await f.chat(documentId)).at(-1)).toMatchObject({
			role: "planner",
			body: "Step one, step two.",
			status: "done",
		});
		await f.until(() => f.ctx.planner.status(documentId).state === "attached", "the Planner to be idle");
	});

	test("the turn leaves once the message is committed; the sender is answered once it is on disk", async () => {
		const { f, documentId, socket, post } = await attachedWithSender();
		// The store's flush held until the test lets it go: the disk is slow.
		const flushed = Promise.withResolvers<void>();
		const flushes = countFlushes(f, flushed.promise);
		let answered = false;
		const posting = post().finally(() => (answered = true));
		const begun = await socket.expect("start");
		// The flush waits for the turn to leave: nothing runs beside the session's start.
		await f.sync(socket);
		expect(flushes.count).toBe(0);
		socket.send({ type: "started", session: begun.session });
		const turn = await socket.expect("turn");
		expect(turn.prompt).toBe(`@${f.cast.admin}: @chopin go`);
		await f.until(() => flushes.count === 1, "the flush, once the turn left");
		expect(answered).toBe(false);
		flushed.resolve();
		expect((await posting).status).toBe(201);
		expect(flushes.count).toBe(1);
		socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
		await f.until(() => f.ctx.planner.status(documentId).state === "attached", "the Planner to be idle");
	});

	test("a session slow to start holds the sender's answer 20 ms at most: the flush starts anyway", async () => {
		const { f, documentId, socket, post } = await attachedWithSender();
		const flushes = countFlushes(f);
		const posting = post();
		const begun = await socket.expect("start");
		await f.sync(socket);
		await f.clock.advance(FLUSH_WAITS_FOR_TURN_MS - 1);
		await f.sync(socket);
		expect(flushes.count).toBe(0);
		await f.clock.advance(1);
		expect((await posting).status).toBe(201);
		expect(flushes.count).toBe(1);
		// The turn still goes on once the session starts.
		socket.send({ type: "started", session: begun.session });
		const turn = await socket.expect("turn");
		socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
		await f.until(() => f.ctx.planner.status(documentId).state === "attached", "the Planner to be idle");
	});

	test("a turn that fails before its frame leaves lets the flush start at once", async () => {
		const { f, documentId, socket, post } = await attachedWithSender();
		const posting = post();
		const begun = await socket.expect("start");
		socket.send({ type: "start-failed", session: begun.session, message: "no model configured" });
		expect((await posting).status).toBe(201);
		await f.until(
			async () => (await f.chat(documentId)).at(-1)?.status === "failed",
			"the reply saying the turn failed",
		);
	});

	test("a message without a mention, or with one only in code, is posted and starts no turn", async () => {
		const { f, documentId } = await start();
		const { socket } = await f.attach("alice", documentId);
		for (const body of ["Just a note.", "Run `@chopin` later.", "```\n@chopin\n```"]) {
			expect(await f.ctx.planner.handleMessage({ documentId, author: "bob", body })).toMatchObject({
				status: "sent",
				turn: false,
			});
		}
		await f.sync(socket);
		expect(socket.received.map((m) => m.type)).toEqual(["attached", "host-tool-result"]);
		expect((await f.chat(documentId)).length).toBe(3);
	});

	test("no attached Planner: refused with how to connect one, and nothing is kept", async () => {
		const { f, documentId } = await start();
		expect(await f.ctx.planner.handleMessage({ documentId, author: "bob", body: "@chopin hi" })).toEqual({
			status: "refused",
			code: "planner-not-attached",
			message: `Connect a machine to get a reply. Connect an agent client to ${f.publicUrl}/d/${documentId} over the agent connection from a session in a checkout of acme/app.`,
		});
		expect(await f.chat(documentId)).toEqual([]);
		// A Planner attaching later is sent nothing.
		const { socket } = await f.attach("alice", documentId);
		await f.sync(socket);
		expect(socket.received.map((m) => m.type)).toEqual(["attached", "host-tool-result"]);
	});

	test("in the grace period: the owner's machine is offline, and nothing is kept", async () => {
		const { f, documentId } = await start();
		const { socket } = await f.attach("alice", documentId);
		socket.send({ type: "detach" });
		await socket.closed;
		await f.until(() => f.ctx.planner.status(documentId).state === "grace");
		expect(await f.ctx.planner.handleMessage({ documentId, author: "bob", body: "@chopin hi" })).toEqual({
			status: "refused",
			code: "planner-not-attached",
			message: "@alice's machine is offline, so this message wasn't sent. Send it again when it's back.",
		});
		expect(await f.chat(documentId)).toEqual([]);
	});

	test("while the Planner works on a turn, another message is refused (no steer-turn) and not posted", async () => {
		const { f, documentId } = await start();
		const { socket } = await f.attach("alice", documentId);
		const turn = await f.chatTurn(socket, documentId, "bob");
		expect(
			await f.ctx.planner.handleMessage({ documentId, author: "carol", body: "@chopin also this" }),
		).toEqual({
			status: "refused",
			code: "planner-busy",
			message: "chopin can't take messages while it works on this machine. Stop it to ask now.",
		});
		expect((await f.chat(documentId)).map((m) => m.body)).not.toContain("@chopin also this");
		socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
		await f.until(() => f.ctx.planner.status(documentId).state === "attached", "the turn to end");
		expect(
			await f.ctx.planner.handleMessage({ documentId, author: "carol", body: "@chopin also this" }),
		).toMatchObject({
			status: "sent",
		});
	});

	test("a turn interrupted by a drop fails with a line saying so, and is never replayed", async () => {
		const { f, documentId } = await start();
		const first = await f.attach("alice", documentId);
		const turn = await f.chatTurn(first.socket, documentId, "bob");
		first.socket.send({
			type: "part",
			session: turn.session,
			turn: turn.turn,
			part: { type: "text-delta", id: "t", delta: "Half" },
		});
		await f.sync(first.socket);
		first.socket.terminate();
		await f.until(() => f.ctx.planner.status(documentId).state === "grace", "the drop");
		await f.ctx.planner.settled();
		await f.until(async () => (await f.chat(documentId)).at(-1)?.status === "failed", "the reply to fail");
		expect((await f.chat(documentId)).at(-1)).toMatchObject({
			role: "planner",
			body: "Half",
			status: "failed",
			error: "The agent connection closed before chopin finished this reply.",
		});
		const again = await f.attach("alice", documentId);
		await f.sync(again.socket);
		expect(again.socket.received.map((m) => m.type)).toEqual(["attached", "host-tool-result"]);
	});

	test("a message is refused as without a Planner when its browser sign-in has ended", async () => {
		const { f, documentId } = await start();
		const { socket } = await f.attach("alice", documentId);
		await f.signOut("alice");
		expect((await socket.expect("refused")).code).toBe("sign-in-required");
		expect(
			await f.ctx.planner.handleMessage({ documentId, author: "bob", body: "@chopin hi" }),
		).toMatchObject({
			status: "refused",
			code: "planner-not-attached",
		});
	});
});

describe("the reply's row (postgres)", () => {
	test("the turn leaves before its reply's row is written; what the client streams meanwhile lands in it", async () => {
		f = await AgentFixture.start({ store: "postgres" });
		const doc = await f.createDocument();
		await f.signIn(f.cast.admin);
		const { store } = f.ctx;
		// A database slow to write Planner rows: inserting one waits for an advisory lock the test holds.
		await store.sql.unsafe(`CREATE FUNCTION hold_planner_rows() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN IF NEW.role = 'planner' THEN PERFORM pg_advisory_xact_lock(4242); END IF; RETURN NEW; END $$`);
		await store.sql.unsafe(
			"CREATE TRIGGER hold_planner_rows BEFORE INSERT ON chat_messages FOR EACH ROW EXECUTE FUNCTION hold_planner_rows()",
		);
		const locked = Promise.withResolvers<void>();
		const release = Promise.withResolvers<void>();
		const holding = store.transaction(async (tx) => {
			await tx.sql`SELECT pg_advisory_xact_lock(4242)`;
			locked.resolve();
			await release.promise;
		});
		await locked.promise;
		try {
			await slowReplyRow(f, doc.id, release);
		} finally {
			release.resolve();
			await holding;
		}
	});
});

/** The turn under a held reply row: the client streams and ends it; the row and what streamed land once let go. */
async function slowReplyRow(f: AgentFixture, documentId: string, release: PromiseWithResolvers<void>) {
	const doc = { id: documentId };
	const { socket } = await f.attach("alice", doc.id);
	const events = f.events(doc.id);
	await f.ctx.planner.handleMessage({ documentId: doc.id, author: "bob", body: "@chopin go" });
	const begun = await socket.expect("start");
	socket.send({ type: "started", session: begun.session });
	// The turn is here while the reply's row still waits on the database.
	const turn = await socket.expect("turn");
	expect(turn.prompt).toBe("@bob: @chopin go");
	const part = (delta: string) => ({
		type: "part" as const,
		session: turn.session,
		turn: turn.turn,
		part: { type: "text-delta" as const, id: "t", delta },
	});
	socket.send(part("Step one"));
	socket.send(part(", step two."));
	socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
	expect(events.some((e) => e.type === "message.created" && e.message.role === "planner")).toBe(false);
	release.resolve();
	await f.until(
		() => events.some((e) => e.type === "message.updated" && e.message.status === "done"),
		"the reply's end",
	);
	const reply = (await f.ctx.domain.chat.list(doc.id)).messages.find((m) => m.role === "planner");
	expect(reply).toMatchObject({ body: "Step one, step two.", status: "done", replyTo: expect.any(String) });
}

describe("the check before a turn (github)", () => {
	test("push access lost: the turn fails and the link is refused access-revoked (4403)", async () => {
		const { f, documentId } = await start("github");
		const { socket } = await f.attach("octocat", documentId);
		f.gh!.setPermission("score-team/score", "octocat", "read");
		expect(
			await f.ctx.planner.handleMessage({ documentId, author: "hubot", body: "@chopin hi" }),
		).toMatchObject({ status: "sent" });
		expect((await socket.expect("refused")).code).toBe("access-revoked");
		expect((await socket.closed).code).toBe(4403);
		await f.until(async () => (await f.chat(documentId)).at(-1)?.status === "failed", "the reply to fail");
		expect((await f.chat(documentId)).at(-1)!.error).toContain("no longer has push or administration access");
	});

	test("GitHub unavailable: the turn fails and the link stays open", async () => {
		const { f, documentId } = await start("github");
		const { socket } = await f.attach("octocat", documentId);
		f.gh!.inject({ kind: "status", status: 502, pathPrefix: "/api/v3/repos", times: 5 });
		await f.ctx.planner.handleMessage({ documentId, author: "hubot", body: "@chopin hi" });
		await f.until(async () => (await f.chat(documentId)).at(-1)?.status === "failed", "the reply to fail");
		expect((await f.chat(documentId)).at(-1)!.error).toContain("GitHub is unavailable");
		await f.sync(socket);
		expect(f.ctx.planner.status(documentId).state).toBe("attached");
	});
});
