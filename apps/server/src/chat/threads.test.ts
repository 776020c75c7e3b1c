// Threads in the Chat service (docs/chat.md, Threads): one level deep off a top-level message, paged apart from
// the main Chat, counted on their root (published again as the thread grows or loses a failed reply), and kept out
// of the main Chat's context; a thread's context is the main Chat up to its root, then the thread.
import { expect, test } from "bun:test";
import { describeStores } from "../store/testing";
import { chatOnNewDocument } from "../testing/chat-document";

describeStores("chat threads", (t) => {
	const setup = async () => {
		const { deps, docs, chat, doc } = await chatOnNewDocument(t.store);
		const say = async (body: string, threadRoot?: string, author = "alice") =>
			(await chat.post(doc.id, { author, body, ...(threadRoot && { threadRoot }) })).message;
		const reply = async (
			text: string,
			replyTo: string,
			threadRoot?: string,
			status: "done" | "failed" = "done",
		) => {
			const message = await chat.replies.start(doc.id, { replyTo, ...(threadRoot && { threadRoot }) });
			// Not awaited: it resolves once a body-write slot stores the text (up to a second away); finish waits for it.
			void chat.replies.appendDelta(message.id, text);
			await (status === "done"
				? chat.replies.finish(message.id, { status })
				: chat.replies.finish(message.id, { status, error: "provider down" }));
			return message;
		};
		return { deps, docs, chat, doc, say, reply };
	};

	test("a thread's messages are paged apart from the main Chat, and its root counts them as it changes", async () => {
		const { deps, chat, doc, say, reply } = await setup();
		const root = await say("@chopin plan it");
		await reply("The plan.", root.id);
		const inThread = await say("Why Monday?", root.id, "bob");
		const failed = await reply("Half", inThread.id, root.id, "failed");
		await say("And after that?");

		expect(inThread.threadRoot).toBe(root.id);
		const main = (await chat.list(doc.id)).messages;
		expect(main.map((m) => m.body)).toEqual(["@chopin plan it", "The plan.", "And after that?"]);
		expect(main[0]!.threadReplies).toBe(2);
		expect(main[1]!.threadReplies).toBeUndefined();
		const thread = (await chat.list(doc.id, { thread: root.id })).messages;
		expect(thread.map((m) => [m.body, m.threadRoot])).toEqual([
			["Why Monday?", root.id],
			["Half", root.id],
		]);
		// Each change of the thread publishes its root again with the new count.
		const counts = () =>
			deps
				.eventsOf("message.updated")
				.filter((e) => e.message.id === root.id)
				.map((e) => e.message.threadReplies);
		expect(counts()).toEqual([1, 2]);
		await chat.replies.remove(failed.id);
		expect(counts()).toEqual([1, 2, 1]);
		expect((await chat.get(root.id)).threadReplies).toBe(1);
	});

	test("a thread hangs off a top-level message of the same document, never a notice or a thread's message", async () => {
		const { docs, chat, doc, say } = await setup();
		const root = await say("Root");
		const inside = await say("Inside", root.id);
		await expect(say("Deeper", inside.id)).rejects.toMatchObject({
			code: "thread-root-invalid",
			status: 409,
		});
		const notice = await chat.postNotice(doc.id, "A notice.");
		await expect(say("On a notice", notice.id)).rejects.toMatchObject({ code: "thread-root-invalid" });
		await expect(say("Nowhere", "no-such-id")).rejects.toMatchObject({
			code: "thread-root-invalid",
			status: 404,
		});
		const other = await docs.create({ repository: "a/b", title: "Other", createdBy: "alice" });
		await expect(
			chat.post(other.id, { author: "alice", body: "Across", threadRoot: root.id }),
		).rejects.toMatchObject({ code: "thread-root-invalid", status: 404 });
		await expect(chat.list(doc.id, { thread: inside.id })).rejects.toMatchObject({
			code: "thread-root-invalid",
		});
		expect((await chat.list(doc.id, { thread: root.id })).messages.map((m) => m.body)).toEqual(["Inside"]);
	});

	test("context: the main Chat's leaves threads out; a thread's is the main Chat up to its root and reply, then the thread", async () => {
		const { chat, doc, say, reply } = await setup();
		const root = await say("@chopin first");
		await reply("First answer.", root.id);
		await say("A note in the thread", root.id, "bob");
		const later = await say("@chopin second");
		await reply("Second answer.", later.id);
		const asked = await say("@chopin deeper", root.id);

		const main = await chat.chatContext(doc.id);
		expect(main.transcript.entries.map((e) => e.line)).toEqual([
			"@alice: @chopin first",
			"@chopin: First answer.",
			"@alice: @chopin second",
			"@chopin: Second answer.",
		]);
		const threaded = await chat.chatContext(doc.id, {
			before: asked.seq,
			thread: { root: root.id, rootSeq: root.seq },
		});
		expect(threaded.transcript.entries.map((e) => e.line)).toEqual([
			"@alice: @chopin first",
			"@chopin: First answer.",
			"@bob: A note in the thread",
		]);
		// The thread's backscroll: its people's messages since the Planner last answered there.
		expect(threaded.backscroll.entries.map((e) => e.line)).toEqual(["@bob: A note in the thread"]);
	});
});
