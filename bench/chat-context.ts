/**
 * A turn's Chat context (chat/context.ts: the backscroll and the transcript a Planner turn is given) against the
 * length of the Chat: the document's Chat grows to each size (people's messages and the Planner's finished replies,
 * alternately), and `chatContext` is timed 300 times at each. A turn's reads must not grow with the Chat
 * (docs/performance.md, Message to turn frame). In process, on a SQLite file or a fresh PostgreSQL schema (ANALYZEd
 * after each fill, as autovacuum keeps a running database's statistics). Not a test: it prints its figures.
 *
 *   bun bench/chat-context.ts [sqlite|postgres, default sqlite] [sizes, default 300,1000,5000,20000]
 */
import { chatContext } from "../apps/server/src/chat/context";
import { migrate } from "../apps/server/src/store/migrate";
import { openStore, type StoreKind } from "../apps/server/src/store/store";
import { createTestDatabase } from "../apps/server/src/store/testing";

const kind = (process.argv[2] ?? "sqlite") as StoreKind;
const sizes = (process.argv[3] ?? "300,1000,5000,20000").split(",").map(Number);

const database = await createTestDatabase(kind);
const store = await openStore({ url: database.url });
try {
	await migrate(store);
	await store.sql`INSERT INTO users (login, created_at) VALUES ('octocat', 0)`;
	await store.sql`INSERT INTO repositories (full_name, owner, name, created_at) VALUES ('a/b', 'a', 'b', 0)`;
	await store.sql`INSERT INTO documents (id, repository, title, source, created_by, created_at, updated_at)
		VALUES ('d1', 'a/b', 'Bench', '', 'octocat', 0, 0)`;
	let seq = 0;
	for (const size of sizes) {
		await store.transaction(async (tx) => {
			for (; seq < size; ) {
				seq++;
				const planner = seq % 2 === 0;
				await tx.sql`INSERT INTO chat_messages (id, document_id, seq, author_login, role, body, status, created_at,
					updated_at) VALUES (${`m${seq}`}, 'd1', ${seq}, ${planner ? null : "octocat"},
					${planner ? "planner" : "person"}, ${`message number ${seq}, with a few words in it`},
					${planner ? "done" : "sent"}, 0, 0)`;
			}
		});
		if (kind === "postgres") await store.sql`ANALYZE chat_messages`;
		const times: number[] = [];
		for (let i = 0; i < 300; i++) {
			const started = performance.now();
			await chatContext(store, "d1", { before: seq + 1 });
			times.push(performance.now() - started);
		}
		times.sort((a, b) => a - b);
		const at = (q: number) => `${(times[Math.ceil(q * times.length) - 1]! * 1000).toFixed(0)} µs`;
		console.log(`${size} messages: chatContext p50 ${at(0.5)}, p90 ${at(0.9)}, p99 ${at(0.99)}`);
	}
} finally {
	await store.close();
	await database.drop();
}
