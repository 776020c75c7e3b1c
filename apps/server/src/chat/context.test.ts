import { expect, test } from "bun:test";
import { describeStores } from "../store/testing";
import { chatOnNewDocument } from "../testing/chat-document";
import {
	BACKSCROLL_MAX_CHARS,
	BACKSCROLL_MAX_ENTRIES,
	TRANSCRIPT_MAX_CHARS,
	TRANSCRIPT_MAX_ENTRIES,
} from "./context";

/** A body whose line `@alice: <body>` is exactly n characters. */
const line = (n: number) => "x".repeat(n - "@alice: ".length);

describeStores("chat context", (t) => {
	const setup = async () => {
		const { chat, doc } = await chatOnNewDocument(t.store);
		const say = (body: string, author = "alice") => chat.post(doc.id, { author, body });
		const reply = async (text: string, status: "done" | "failed" = "done") => {
			const message = await chat.replies.start(doc.id);
			// Not awaited: it resolves once a body-write slot stores the text (up to a second away); finish waits for it.
			void chat.replies.appendDelta(message.id, text);
			return status === "done"
				? chat.replies.finish(message.id, { status })
				: chat.replies.finish(message.id, { status, error: "provider down" });
		};
		return { chat, doc, say, reply };
	};

	test("the bounds are hosted-agent.md's", () => {
		expect([BACKSCROLL_MAX_ENTRIES, BACKSCROLL_MAX_CHARS]).toEqual([40, 8_000]);
		expect([TRANSCRIPT_MAX_ENTRIES, TRANSCRIPT_MAX_CHARS]).toEqual([100, 50_000]);
	});

	test("entries keep each author's handle, and the Planner's own replies read as @chopin", async () => {
		const { chat, doc, say, reply } = await setup();
		await say("Should we use PostgreSQL?");
		await say("I'd rather not", "bob");
		await reply("Both work; here is why.");
		await say("@chopin thanks", "carol");
		const context = await chat.chatContext(doc.id);
		expect(context.transcript.entries.map((e) => e.line)).toEqual([
			"@alice: Should we use PostgreSQL?",
			"@bob: I'd rather not",
			"@chopin: Both work; here is why.",
			"@carol: @chopin thanks",
		]);
		expect(context.transcript.entries.map((e) => e.role)).toEqual(["person", "person", "planner", "person"]);
		// Backscroll: only what came after the Planner's last finished reply.
		expect(context.backscroll).toMatchObject({
			entries: [{ login: "carol", text: "@chopin thanks" }],
			olderLeftOut: false,
		});
	});

	test("backscroll holds at most 40 entries, the newest ones", async () => {
		const { chat, doc, say, reply } = await setup();
		await say("before the last turn");
		await reply("ok");
		for (let i = 1; i <= 45; i++) await say(`m${i}`);
		const { backscroll } = await chat.chatContext(doc.id);
		expect(backscroll.entries).toHaveLength(40);
		expect(backscroll.entries[0]!.text).toBe("m6");
		expect(backscroll.entries.at(-1)!.text).toBe("m45");
		expect(backscroll.olderLeftOut).toBe(true);
	});

	test("older entries are said to be left out only when there are some: 40 in the backscroll are all of it, 41 are not", async () => {
		const { chat, doc, say } = await setup();
		for (let i = 1; i <= 40; i++) await say(`m${i}`);
		let { backscroll } = await chat.chatContext(doc.id);
		expect(backscroll.entries).toHaveLength(40);
		expect(backscroll.olderLeftOut).toBe(false);
		await say("m41");
		({ backscroll } = await chat.chatContext(doc.id));
		expect(backscroll.entries).toHaveLength(40);
		expect(backscroll.entries[0]!.text).toBe("m2");
		expect(backscroll.olderLeftOut).toBe(true);
	});

	test("backscroll holds normally 8,000 characters, counted in code points of each line", async () => {
		const { chat, doc, say } = await setup();
		await say(line(3000));
		await say(line(3000));
		await say(line(2000));
		let { backscroll } = await chat.chatContext(doc.id);
		// 2000 + 3000 + 3000 = 8000 exactly: all three fit.
		expect(backscroll.entries.map((e) => e.chars)).toEqual([3000, 3000, 2000]);
		await say(line(9));
		({ backscroll } = await chat.chatContext(doc.id));
		// 9 more characters would be over: the oldest goes.
		expect(backscroll.entries.map((e) => e.chars)).toEqual([3000, 2000, 9]);
		expect(backscroll.olderLeftOut).toBe(true);
		// 7983 emoji are 15,966 UTF-16 units but 7,991 characters: with the 9 before them, exactly 8,000.
		await say("😀".repeat(7983));
		({ backscroll } = await chat.chatContext(doc.id));
		expect(backscroll.entries.map((e) => e.chars)).toEqual([9, 7991]);
		expect(backscroll.olderLeftOut).toBe(true);
	});

	test("one message over the budget alone is kept whole, and only when it is the newest", async () => {
		const { chat, doc, say } = await setup();
		await say("older");
		await say(line(12_000));
		let { backscroll } = await chat.chatContext(doc.id);
		expect(backscroll.entries.map((e) => e.chars)).toEqual([12_000]);
		expect(backscroll.entries[0]!.text).toBe(line(12_000));
		expect(backscroll.olderLeftOut).toBe(true);
		await say("newer");
		({ backscroll } = await chat.chatContext(doc.id));
		expect(backscroll.entries.map((e) => e.text)).toEqual(["newer"]);
		expect(backscroll.olderLeftOut).toBe(true);
	});

	test("the transcript holds at most the last 100 entries", async () => {
		const { chat, doc, say, reply } = await setup();
		for (let i = 1; i <= 52; i++) {
			await say(`q${i}`);
			await reply(`a${i}`);
		}
		const { transcript, backscroll } = await chat.chatContext(doc.id);
		expect(transcript.entries).toHaveLength(100);
		expect(transcript.entries[0]!.line).toBe("@alice: q3");
		expect(transcript.entries.at(-1)!.line).toBe("@chopin: a52");
		expect(transcript.olderLeftOut).toBe(true);
		expect(backscroll).toEqual({ entries: [], olderLeftOut: false });
	});

	test("the transcript holds at most 50,000 characters, and never cuts an entry", async () => {
		const { chat, doc, say, reply } = await setup();
		await say(line(20_000));
		await say(line(20_000));
		await say(line(10_000));
		let { transcript } = await chat.chatContext(doc.id);
		expect(transcript.entries.map((e) => e.chars)).toEqual([20_000, 20_000, 10_000]);
		await say("x");
		({ transcript } = await chat.chatContext(doc.id));
		expect(transcript.entries.map((e) => e.chars)).toEqual([20_000, 10_000, 9]);
		expect(transcript.olderLeftOut).toBe(true);
		// A reply longer than the whole budget leaves nothing that fits after it.
		await reply("y".repeat(TRANSCRIPT_MAX_CHARS));
		({ transcript } = await chat.chatContext(doc.id));
		expect(transcript).toEqual({ entries: [], olderLeftOut: true });
	});

	test("failed and streaming replies and system notices are not context; before leaves the turn's message out", async () => {
		const { chat, doc, say, reply } = await setup();
		await say("first");
		await reply("answer");
		await say("second");
		await reply("half an answer", "failed");
		await chat.postNotice(doc.id, "The Planner's machine went offline.");
		const streaming = await chat.replies.start(doc.id);
		await chat.replies.appendDelta(streaming.id, "thinking");
		const turn = await say("@chopin third");
		const context = await chat.chatContext(doc.id);
		expect(context.transcript.entries.map((e) => e.line)).toEqual([
			"@alice: first",
			"@chopin: answer",
			"@alice: second",
			"@alice: @chopin third",
		]);
		// A failed reply is no finished turn: what it was asked is still backscroll.
		expect(context.backscroll.entries.map((e) => e.text)).toEqual(["second", "@chopin third"]);
		const forTurn = await chat.chatContext(doc.id, { before: turn.message.seq });
		expect(forTurn.backscroll.entries.map((e) => e.text)).toEqual(["second"]);
		expect(forTurn.transcript.entries.at(-1)!.text).toBe("second");
	});
});
