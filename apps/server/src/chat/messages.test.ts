import { expect, test } from "bun:test";
import { describeStores } from "../store/testing";
import { chatOnNewDocument } from "../testing/chat-document";
import { ChatError } from "./errors";
import { MAX_MESSAGE_CHARS } from "./messages";

async function rejected(promise: Promise<unknown>): Promise<ChatError> {
	try {
		await promise;
	} catch (error) {
		if (error instanceof ChatError) return error;
		throw error;
	}
	throw new Error("expected a ChatError");
}

describeStores("chat messages", (t) => {
	const setup = () => chatOnNewDocument(t.store);

	test("a person's message is stored in order, published, and says whether it asks the Planner", async () => {
		const { deps, chat, doc } = await setup();
		const first = await chat.post(doc.id, { author: "alice", body: "Hello everyone" });
		await deps.clock.advance(5);
		const second = await chat.post(doc.id, { author: "bob", body: "@chopin what do you think?" });
		expect(first.mentionsPlanner).toBe(false);
		expect(second.mentionsPlanner).toBe(true);
		expect(first.message).toMatchObject({
			documentId: doc.id,
			seq: 1,
			role: "person",
			authorLogin: "alice",
			body: "Hello everyone",
			status: "done",
			replyTo: null,
			tools: [],
			images: [],
		});
		expect(first.message.refusedImages).toBeUndefined();
		expect(second.message.seq).toBe(2);
		expect(second.message.createdAt).toBe(first.message.createdAt + 5);
		const created = deps.eventsOf("message.created");
		expect(created.map((e) => e.message.id)).toEqual([first.message.id, second.message.id]);
		expect(await chat.get(first.message.id)).toEqual(first.message);
	});

	test("bodies: not blank, at most 20,000 characters counted as code points; logins are GitHub-style", async () => {
		const { chat, doc } = await setup();
		expect((await rejected(chat.post(doc.id, { author: "alice", body: " \n\t" }))).code).toBe(
			"message-empty",
		);
		const emoji = "😀".repeat(MAX_MESSAGE_CHARS);
		expect((await chat.post(doc.id, { author: "alice", body: emoji })).message.body).toBe(emoji);
		const long = await rejected(chat.post(doc.id, { author: "alice", body: `${emoji}x` }));
		expect(long.code).toBe("message-too-long");
		for (const author of ["", "-bo", "bo-", "a b", "x".repeat(40)]) {
			expect((await rejected(chat.post(doc.id, { author, body: "hi" }))).code).toBe("invalid-login");
		}
	});

	test("archived documents take notices but not messages; missing ones nothing", async () => {
		const { docs, chat, doc } = await setup();
		await docs.archive(doc.id);
		const refused = await rejected(chat.post(doc.id, { author: "alice", body: "hi" }));
		expect([refused.code, refused.status]).toEqual(["document-archived", 409]);
		expect((await rejected(chat.replies.start(doc.id))).code).toBe("document-archived");
		const notice = await chat.postNotice(doc.id, "The document was archived.");
		expect(notice).toMatchObject({ role: "system", authorLogin: null, status: "done" });
		const missing = await rejected(chat.post("nosuchdocumt", { author: "alice", body: "hi" }));
		expect([missing.code, missing.status]).toEqual(["document-not-found", 404]);
		expect((await rejected(chat.get("nosuchmessage"))).status).toBe(404);
	});

	test("a deleted document takes nothing, a lazy commit included", async () => {
		const { docs, chat } = await setup();
		const doc = await docs.create({ repository: "a/b", title: "Gone", createdBy: "alice" });
		await t.store.sql`UPDATE documents SET deleted = 1 WHERE id = ${doc.id}`;
		const lazy = await rejected(chat.post(doc.id, { author: "alice", body: "hi" }, { durable: false }));
		expect([lazy.code, lazy.status]).toEqual(["document-not-found", 404]);
		expect((await rejected(chat.postNotice(doc.id, "Archived."))).code).toBe("document-not-found");
		expect((await chat.list(doc.id).catch(() => ({ messages: [] }))).messages).toEqual([]);
	});

	test("a lazy commit leaves the connections' synchronous_commit as it was", async () => {
		const { chat, doc } = await setup();
		for (let i = 0; i < 8; i++)
			await chat.post(doc.id, { author: "alice", body: `m${i}` }, { durable: false });
		if (t.kind !== "postgres") return;
		// Each on a connection of the pool, at once: every one the lazy posts used is among them.
		const modes = await Promise.all(
			Array.from({ length: 10 }, () => t.store.one(t.store.sql`SHOW synchronous_commit`)),
		);
		expect(new Set(modes.map((row) => row?.synchronous_commit))).toEqual(new Set(["on"]));
	});

	test("history pages back from the newest, oldest first on each page", async () => {
		const { chat, doc } = await setup();
		for (let i = 1; i <= 7; i++) await chat.post(doc.id, { author: "alice", body: `m${i}` });
		const latest = await chat.list(doc.id, { limit: 3 });
		expect(latest.messages.map((m) => m.body)).toEqual(["m5", "m6", "m7"]);
		expect(latest.more).toBe(true);
		const older = await chat.list(doc.id, { limit: 3, before: latest.messages[0]!.seq });
		expect(older.messages.map((m) => m.body)).toEqual(["m2", "m3", "m4"]);
		const oldest = await chat.list(doc.id, { limit: 3, before: older.messages[0]!.seq });
		expect([oldest.messages.map((m) => m.body), oldest.more]).toEqual([["m1"], false]);
		expect((await chat.list(doc.id)).messages).toHaveLength(7);
		for (const limit of [0, 201, 1.5]) {
			expect((await rejected(chat.list(doc.id, { limit }))).code).toBe("invalid-page");
		}
	});

	test("concurrent posts each get their own seq", async () => {
		const { chat, doc } = await setup();
		const posted = await Promise.all(
			Array.from({ length: 12 }, (_, i) => chat.post(doc.id, { author: "alice", body: `m${i}` })),
		);
		expect(posted.map((p) => p.message.seq).sort((a, b) => a - b)).toEqual(
			Array.from({ length: 12 }, (_, i) => i + 1),
		);
	});
});
