import { expect, test } from "bun:test";
import { makePng } from "../images/test-images";
import { describeStores } from "../store/testing";
import { chatOnNewDocument } from "../testing/chat-document";
import { startTestServer } from "../testing/server";
import { ChatError } from "./errors";

async function rejected(promise: Promise<unknown>): Promise<ChatError> {
	try {
		await promise;
	} catch (error) {
		if (error instanceof ChatError) return error;
		throw error;
	}
	throw new Error("expected a ChatError");
}

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

describeStores("chat replies", (t) => {
	const setup = () => chatOnNewDocument(t.store);

	test("a reply streams thousands of deltas in order, in few writes, and finishes done", async () => {
		const { deps, chat, doc } = await setup();
		const asked = await chat.post(doc.id, { author: "alice", body: "@chopin go" });
		const reply = await chat.replies.start(doc.id, { replyTo: asked.message.id });
		expect(reply).toMatchObject({
			role: "planner",
			status: "streaming",
			body: "",
			replyTo: asked.message.id,
		});
		const deltas = Array.from({ length: 2000 }, (_, i) => `${i} 😀 `);
		const writes = deltas.map((d) => chat.replies.appendDelta(reply.id, d));
		// Before any write lands, a reader already sees every delta (this process streams it).
		expect((await chat.get(reply.id)).body).toBe(deltas.join(""));
		await Promise.all(writes);
		const stored = await t.store.one(
			t.store.sql`SELECT body, status FROM chat_messages WHERE id = ${reply.id}`,
		);
		expect(stored).toEqual({ body: deltas.join(""), status: "streaming" });
		const events = deps.eventsOf("message.delta");
		expect(events.map((e) => e.delta)).toEqual(deltas);
		let offset = 0;
		for (const event of events) {
			expect(event.offset).toBe(offset);
			offset += event.delta.length;
		}
		const done = await chat.replies.finish(reply.id, { status: "done" });
		expect(done).toMatchObject({ status: "done", body: deltas.join("") });
		expect(done.error).toBeUndefined();
		expect(deps.eventsOf("message.updated").at(-1)?.message.status).toBe("done");
		// A finished reply takes nothing more.
		expect((await rejected(chat.replies.appendDelta(reply.id, "late"))).code).toBe("message-not-streaming");
		expect((await rejected(chat.replies.finish(reply.id, { status: "done" }))).code).toBe(
			"message-not-streaming",
		);
	});

	test("finish waits for the deltas before it, and a failed reply keeps its text and a masked error line", async () => {
		const { chat, doc } = await setup();
		const reply = await chat.replies.start(doc.id);
		void chat.replies.appendDelta(reply.id, "partial ");
		void chat.replies.appendDelta(reply.id, "answer");
		const failed = await chat.replies.finish(reply.id, {
			status: "failed",
			error: `The model provider failed: token=ghp_abcdefghijklmnop1234 ${"x".repeat(5000)}`,
		});
		expect(failed.status).toBe("failed");
		expect(failed.body).toBe("partial answer");
		expect(failed.error).not.toContain("ghp_abcdefghijklmnop1234");
		expect(failed.error).toStartWith("The model provider failed: token=[redacted]");
		expect([...failed.error!].length).toBe(4000);
		expect(chat.replies.isStreaming(reply.id)).toBe(false);
	});

	test("Work details rows: masked input and results, structured errors, and calls stopped by the turn's end", async () => {
		const { chat, doc } = await setup();
		const reply = await chat.replies.start(doc.id);
		await chat.replies.startTool(reply.id, {
			toolCallId: "c1",
			name: "search_code",
			input: '{"query":"auth","password":"hunter2"}',
		});
		await chat.replies.startTool(reply.id, { toolCallId: "c2", name: "deploy", input: { target: "prod" } });
		await chat.replies.startTool(reply.id, { toolCallId: "c3", name: "long_job", input: "{}" });
		expect(
			(await rejected(chat.replies.startTool(reply.id, { toolCallId: "c1", name: "x", input: "{}" }))).code,
		).toBe("tool-call-repeated");
		await chat.replies.finishTool(reply.id, {
			toolCallId: "c1",
			result: { hits: 3, url: "https://bo:pw@example.com" },
		});
		await chat.replies.finishTool(reply.id, {
			toolCallId: "c2",
			isError: true,
			result: {
				error: {
					code: "no-repository-credential",
					kind: "NoRepositoryCredential",
					message: "Sign in again; password=hunter2",
				},
			},
		});
		// A preliminary result keeps the call running.
		await chat.replies.finishTool(reply.id, { toolCallId: "c3", preliminary: true, result: "halfway" });
		// A result whose call was never started makes its row.
		await chat.replies.finishTool(reply.id, {
			toolCallId: "c4",
			name: "own_tool",
			isError: true,
			result: "boom",
		});
		const done = await chat.replies.finish(reply.id, { status: "done" });
		const rows = Object.fromEntries(done.tools.map((r) => [r.toolCallId, r]));
		expect(done.tools.map((r) => r.toolCallId)).toEqual(["c1", "c2", "c3", "c4"]);
		expect(rows.c1).toMatchObject({
			name: "search_code",
			input: '{"query":"auth","password":"[redacted]"}',
			status: "done",
			result: '{"hits":3,"url":"https://[redacted]@example.com"}',
		});
		expect(rows.c2).toMatchObject({
			input: '{"target":"prod"}',
			status: "failed",
			error: { label: "NoRepositoryCredential", message: "Sign in again; password=[redacted]" },
		});
		expect(rows.c2!.result).toBeUndefined();
		expect(rows.c3).toMatchObject({
			status: "failed",
			result: "halfway",
			error: { label: "Stopped", message: "The turn ended before this call finished." },
		});
		expect(rows.c4).toMatchObject({
			name: "own_tool",
			status: "failed",
			error: { label: "Failed", message: "boom" },
		});
		for (const row of done.tools) expect(row.endedAt).toBeNumber();
	});

	test("images a tool made go on the turn's message in order, with reasons for the ones not shown", async () => {
		const { chat, images, doc } = await setup();
		const reply = await chat.replies.start(doc.id);
		const red = makePng(30, 20);
		const blue = makePng(10, 10, { alpha: false });
		await chat.replies.startTool(reply.id, { toolCallId: "img1", name: "draw", input: "{}" });
		await chat.replies.finishTool(reply.id, {
			toolCallId: "img1",
			result: {
				content: [
					{ type: "text", text: "Here you go" },
					{ type: "image", data: base64(red), mimeType: "image/png", alt: "A red box", caption: "" },
					{ type: "image", data: "<svg/>", mimeType: "image/svg+xml" },
				],
			},
		});
		await chat.replies.startTool(reply.id, { toolCallId: "img2", name: "draw", input: "{}" });
		await chat.replies.finishTool(reply.id, {
			toolCallId: "img2",
			result: JSON.stringify({ content: [{ type: "image", data: base64(blue), mimeType: "image/png" }] }),
		});
		const stored = await images.store(doc.id, makePng(8, 8));
		await chat.replies.attachImage(reply.id, stored, "Uploaded");
		const done = await chat.replies.finish(reply.id, { status: "done" });
		expect(done.images.map((i) => [i.width, i.height, i.alt, i.caption])).toEqual([
			[30, 20, "A red box", ""],
			[10, 10, undefined, undefined],
			[8, 8, "Uploaded", undefined],
		]);
		for (const image of done.images) expect(await images.isDocumentImage(doc.id, image.path)).toBe(true);
		expect(done.refusedImages).toEqual([
			{ before: 1, reason: "Image couldn't be shown: its type, image/svg+xml, is not one Chat shows." },
		]);
		expect(done.tools[0]).toMatchObject({ result: "Here you go\n\n2 images", imageCount: 2 });
	});

	test("tools, images and deltas after the reply finished are refused", async () => {
		const { chat, doc } = await setup();
		const reply = await chat.replies.start(doc.id);
		await chat.replies.finish(reply.id, { status: "done" });
		for (const attempt of [
			() => chat.replies.startTool(reply.id, { toolCallId: "c", name: "x", input: "" }),
			() => chat.replies.finishTool(reply.id, { toolCallId: "c", result: "" }),
			() => chat.replies.attachImage(reply.id, { path: "/images/x.png" } as never),
			() => chat.replies.appendDelta("nosuchmessage", "x"),
		]) {
			expect((await rejected(attempt())).code).toBe("message-not-streaming");
		}
	});

	test("remove takes a failed reply and its tool rows out of the store, publishes message.deleted, and takes nothing else", async () => {
		const { deps, chat, doc } = await setup();
		const events: unknown[] = [];
		deps.hub.subscribe(doc.id, (event) => events.push(event));
		const asked = await chat.post(doc.id, { author: "alice", body: "@chopin go" });
		const reply = await chat.replies.start(doc.id, { replyTo: asked.message.id });
		await chat.replies.appendDelta(reply.id, "Half");
		await chat.replies.startTool(reply.id, { toolCallId: "c1", name: "search", input: "{}" });
		const done = await chat.replies.start(doc.id, { replyTo: asked.message.id });
		expect((await rejected(chat.replies.remove(reply.id))).code).toBe("message-not-retryable");
		await chat.replies.finish(reply.id, { status: "failed", error: "Down." });
		await chat.replies.finish(done.id, { status: "done" });
		expect((await rejected(chat.replies.remove(done.id))).code).toBe("message-not-retryable");
		expect((await rejected(chat.replies.remove(asked.message.id))).code).toBe("message-not-retryable");
		await chat.replies.remove(reply.id);
		expect(events.at(-1)).toEqual({ type: "message.deleted", documentId: doc.id, messageId: reply.id });
		expect((await chat.list(doc.id)).messages.map((m) => m.id)).toEqual([asked.message.id, done.id]);
		const rows = await t.store.one(
			t.store.sql`SELECT count(*) AS n FROM chat_tool_calls WHERE message_id = ${reply.id}`,
		);
		expect(Number(rows?.n)).toBe(0);
		expect((await rejected(chat.replies.remove(reply.id))).code).toBe("message-not-found");
	});
});

test("a reply a process left streaming (it was killed mid-turn) is failed, with a sentence and its running calls stopped, when the next one starts", async () => {
	await using server = await startTestServer({ env: { DEMO: "off" } });
	const { chat, documents } = server.context.domain;
	const doc = await documents.create({ repository: "a/b", title: "Doc", createdBy: "alice" });
	const asked = await chat.post(doc.id, { author: "alice", body: "@chopin go" });
	const reply = await chat.replies.start(doc.id, { replyTo: asked.message.id });
	await chat.replies.appendDelta(reply.id, "Half a sentence");
	await chat.replies.startTool(reply.id, { toolCallId: "c1", name: "search_code", input: "{}" });
	// Nothing finishes it: as after a kill -9, the next process finds it streaming in the store.
	await server.restart();
	expect(await server.context.domain.chat.get(reply.id)).toMatchObject({
		status: "failed",
		body: "Half a sentence",
		error: "Chopin restarted before this reply finished.",
		// Its call still running is stopped as a finished reply's would be.
		tools: [
			{
				toolCallId: "c1",
				status: "failed",
				error: { label: "Stopped", message: "The turn ended before this call finished." },
			},
		],
	});
	// A reply of the new process streams as before.
	const next = await server.context.domain.chat.replies.start(doc.id, { replyTo: asked.message.id });
	expect(next.status).toBe("streaming");
});
