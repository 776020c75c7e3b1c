import { expect, test } from "bun:test";
import { describeStores } from "../store/testing";
import { chatOnNewDocument } from "../testing/chat-document";
import { forkSource, recordForkPoint } from "./fork-points";

describeStores("fork points", (t) => {
	test("a message's point is replaced, and a reader meanwhile sees the old one or the new, never none", async () => {
		const { chat, doc } = await chatOnNewDocument(t.store);
		const { message } = await chat.post(doc.id, { author: "alice", body: "@chopin plan it" });
		await recordForkPoint(t.store, message.id, { session: "ses_1", turn: "trn_1" }, 1_000);
		const replacing = recordForkPoint(t.store, message.id, { session: "ses_2", turn: "trn_2" }, 2_000);
		// Read while the replacement is under way: as two statements (delete, then insert) it left a moment with none.
		const meanwhile = t.store.sql`SELECT session FROM chat_fork_points WHERE message_id = ${message.id}`;
		const [[seen]] = await Promise.all([meanwhile as Promise<{ session: string }[]>, replacing]);
		expect(["ses_1", "ses_2"]).toContain(seen?.session as string);
		expect(await forkSource(t.store, message, Number.MAX_SAFE_INTEGER)).toEqual({
			session: "ses_2",
			turn: "trn_2",
		});
		const [{ n }] = (await t.store.sql`SELECT count(*) AS n FROM chat_fork_points`) as {
			n: number | string;
		}[];
		expect(Number(n)).toBe(1);
	});
});
