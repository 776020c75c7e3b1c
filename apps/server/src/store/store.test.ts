import { describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { dbBoolean, dbJson } from "./codecs";
import { isUniqueViolation, StoreError } from "./errors";
import { migrate } from "./migrate";
import { MIGRATIONS } from "./migrations/index";
import { openStore } from "./store";
import { describeStores } from "./testing";

async function scratchTable(t: { store: { sql: import("bun").SQL } }) {
	await t.store.sql.unsafe(
		"CREATE TABLE scratch (id TEXT PRIMARY KEY, n BIGINT, flag INTEGER, data BYTEA, body TEXT, tag TEXT UNIQUE)",
	);
}

describeStores("store", (t) => {
	test("integers, counts, booleans, dates and bytes read the same on both databases", async () => {
		await scratchTable(t);
		const big = 2 ** 40 + 7;
		const when = new Date(Date.UTC(2026, 0, 2));
		const bytes = new Uint8Array([0, 1, 2, 250, 255]);
		await t.store
			.sql`INSERT INTO scratch ${t.store.sql({ id: "a", n: big, flag: true, data: bytes, body: "{}" })}`;
		await t.store.sql`INSERT INTO scratch (id, n, flag) VALUES (${"b"}, ${when}, ${false})`;

		const a = await t.store.one(t.store.sql`SELECT * FROM scratch WHERE id = ${"a"}`);
		expect(a).toEqual({ id: "a", n: big, flag: 1, data: bytes, body: "{}", tag: null });
		expect(a!.data!.constructor).toBe(Uint8Array);
		const b = await t.store.one(t.store.sql`SELECT n, flag FROM scratch WHERE id = ${"b"}`);
		expect(b).toEqual({ n: when.getTime(), flag: 0 });

		const [count] = await t.store.sql`SELECT count(*) AS c, 1 = 1 AS yes, 1 = 2 AS no FROM scratch`;
		expect(count).toEqual({ c: 2, yes: 1, no: 0 });
		const values = await t.store.sql`SELECT count(*) AS c, sum(n) AS s FROM scratch`.values();
		expect(values).toEqual([[2, big + when.getTime()]]);
		const listed = await t.store.many(
			t.store.sql`SELECT id FROM scratch WHERE id IN ${t.store.sql(["a", "b", "z"])} ORDER BY id`,
		);
		expect(listed.map((r) => r.id)).toEqual(["a", "b"]);
	});

	test("row schemas parse 0/1 and JSON text, and a row that does not fit is refused", async () => {
		await scratchTable(t);
		await t.store
			.sql`INSERT INTO scratch (id, flag, body) VALUES (${"a"}, ${true}, ${JSON.stringify({ x: [1] })})`;
		const schema = z.object({
			id: z.string(),
			flag: dbBoolean,
			body: dbJson(z.object({ x: z.array(z.number()) })),
		});
		const row = await t.store.one(t.store.sql`SELECT id, flag, body FROM scratch`, schema);
		expect(row).toEqual({ id: "a", flag: true, body: { x: [1] } });
		const rows = await t.store.many(t.store.sql`SELECT id, flag, body FROM scratch`, schema);
		expect(rows).toEqual([{ id: "a", flag: true, body: { x: [1] } }]);
		const wrong = z.object({ id: z.number() });
		await expect(t.store.one(t.store.sql`SELECT id FROM scratch`, wrong)).rejects.toMatchObject({
			code: "row-invalid",
		});
	});

	test("one() returns undefined for no row and refuses more than one", async () => {
		await scratchTable(t);
		expect(await t.store.one(t.store.sql`SELECT id FROM scratch`)).toBeUndefined();
		await t.store.sql`INSERT INTO scratch ${t.store.sql([{ id: "a" }, { id: "b" }])}`;
		await expect(t.store.one(t.store.sql`SELECT id FROM scratch`)).rejects.toMatchObject({
			code: "too-many-rows",
		});
	});

	test("isUniqueViolation recognises primary keys and unique columns, and nothing else", async () => {
		await scratchTable(t);
		await t.store.sql`INSERT INTO scratch (id, tag) VALUES (${"a"}, ${"x"})`;
		const caught = async (query: PromiseLike<unknown>) => {
			try {
				await query;
			} catch (error) {
				return error;
			}
			throw new Error("the query did not fail");
		};
		expect(isUniqueViolation(await caught(t.store.sql`INSERT INTO scratch (id) VALUES (${"a"})`))).toBe(true);
		expect(
			isUniqueViolation(await caught(t.store.sql`INSERT INTO scratch (id, tag) VALUES (${"b"}, ${"x"})`)),
		).toBe(true);
		// Foreign keys are enforced on both (SQLite needs PRAGMA foreign_keys), and are not unique violations.
		const fk = await caught(
			t.store
				.sql`INSERT INTO documents ${t.store.sql({ id: "d", repository: "no/such", title: "", source: "", created_by: "x", created_at: 1, updated_at: 1 })}`,
		);
		expect(isUniqueViolation(fk)).toBe(false);
		expect(isUniqueViolation(await caught(t.store.sql`SELECT * FROM no_such_table`))).toBe(false);
		expect(isUniqueViolation(new Error("duplicate key"))).toBe(false);
	});

	test("a transaction commits what it wrote, and rolls it all back when it throws", async () => {
		await scratchTable(t);
		const result = await t.store.transaction(async (tx) => {
			await tx.sql`INSERT INTO scratch (id) VALUES (${"kept"})`;
			return tx.one(tx.sql`SELECT count(*) AS c FROM scratch`);
		});
		expect(result).toEqual({ c: 1 });

		const boom = new Error("boom");
		const failed = t.store.transaction(async (tx) => {
			await tx.sql`INSERT INTO scratch (id) VALUES (${"lost"})`;
			await tx.sql`UPDATE scratch SET body = ${"changed"} WHERE id = ${"kept"}`;
			throw boom;
		});
		await expect(failed).rejects.toBe(boom);
		await failed.catch(() => {});
		const rows = await t.store.many(t.store.sql`SELECT id, body FROM scratch ORDER BY id`);
		expect(rows).toEqual([{ id: "kept", body: null }]);
	});

	test("a query outside an open transaction neither sees its writes nor is rolled back with it", async () => {
		await scratchTable(t);
		let release!: () => void;
		const gate = new Promise<void>((r) => {
			release = r;
		});
		let written!: () => void;
		const wrote = new Promise<void>((r) => {
			written = r;
		});
		const tx = t.store.transaction(async (tx) => {
			await tx.sql`INSERT INTO scratch (id) VALUES (${"inside"})`;
			written();
			await gate;
			throw new Error("roll back");
		});
		await wrote;
		// On SQLite these wait for the transaction; on PostgreSQL they run beside it. Either way
		// they must not see "inside", and "outside" must survive the rollback.
		const read = t.store.many(t.store.sql`SELECT id FROM scratch`);
		const write = t.store.sql`INSERT INTO scratch (id) VALUES (${"outside"})`;
		release();
		await tx.catch(() => {});
		expect((await read).map((r) => r.id)).toEqual([]);
		await write;
		expect((await t.store.many(t.store.sql`SELECT id FROM scratch`)).map((r) => r.id)).toEqual(["outside"]);
	});

	test("the store's own sql inside a transaction is refused, and the transaction rolls back", async () => {
		await scratchTable(t);
		const attempt = t.store.transaction(async (tx) => {
			await tx.sql`INSERT INTO scratch (id) VALUES (${"a"})`;
			await t.store.sql`SELECT 1`;
		});
		await expect(attempt).rejects.toMatchObject({ code: "outside-transaction" });
		await attempt.catch(() => {});
		await expect(t.store.transaction(async () => t.store.transaction(async () => 1))).rejects.toMatchObject({
			code: "outside-transaction",
		});
		expect(await t.store.many(t.store.sql`SELECT id FROM scratch`)).toEqual([]);
		expect(() => t.store.sql.begin(async () => {})).toThrow(/store.transaction/);
	});

	test("a transaction that need not be durable commits and rolls back as any other, and leaves the level as it was", async () => {
		await scratchTable(t);
		const level = async () =>
			t.store.kind === "sqlite"
				? (await t.store.sql`PRAGMA synchronous`)[0].synchronous
				: (await t.store.sql`SHOW synchronous_commit`)[0].synchronous_commit;
		const before = await level();
		await t.store.transaction(
			async (tx) => {
				await tx.sql`INSERT INTO scratch (id) VALUES (${"a"})`;
				if (t.store.kind === "postgres") {
					expect((await tx.sql`SHOW synchronous_commit`)[0].synchronous_commit).toBe("off");
				}
			},
			{ durable: false },
		);
		await expect(
			t.store.transaction(
				async (tx) => {
					await tx.sql`INSERT INTO scratch (id) VALUES (${"b"})`;
					throw new Error("no");
				},
				{ durable: false },
			),
		).rejects.toThrow("no");
		const rows = await t.store.many(t.store.sql`SELECT id FROM scratch ORDER BY id`);
		expect(rows.map((r) => r.id)).toEqual(["a"]);
		expect(await level()).toEqual(before);
	});

	test("synced(): lazy commits are on disk once it resolves; callers meanwhile share one flush", async () => {
		await scratchTable(t);
		let lsn: string | undefined;
		await t.store.transaction(
			async (tx) => {
				await tx.sql`INSERT INTO scratch (id) VALUES (${"lazy"})`;
				if (t.store.kind === "postgres") {
					lsn = (await tx.sql`SELECT pg_current_wal_insert_lsn()::text AS lsn`)[0].lsn;
				}
			},
			{ durable: false },
		);
		await Promise.all([t.store.synced(), t.store.synced(), t.store.synced()]);
		if (t.store.kind === "postgres") {
			// The WAL is flushed past the lazy commit's record: what synchronous_commit=off had skipped.
			const [row] = await t.store.sql`SELECT pg_current_wal_flush_lsn() >= ${lsn}::pg_lsn AS flushed`;
			expect(row.flushed).toBe(1);
		}
		expect(await t.store.many(t.store.sql`SELECT id FROM scratch`)).toEqual([{ id: "lazy" }]);
	});

	test("a savepoint rolls back only its own part", async () => {
		await scratchTable(t);
		await t.store.transaction(async (tx) => {
			await tx.sql`INSERT INTO scratch (id) VALUES (${"outer"})`;
			await tx.sql
				.savepoint(async (sp) => {
					await sp`INSERT INTO scratch (id) VALUES (${"inner"})`;
					throw new Error("undo inner");
				})
				.catch(() => {});
		});
		expect((await t.store.many(t.store.sql`SELECT id FROM scratch`)).map((r) => r.id)).toEqual(["outer"]);
	});

	test("the migrated schema has every table of migration 0001", async () => {
		const tables = [
			"users",
			"browser_sessions",
			"repositories",
			"documents",
			"document_images",
			"chat_messages",
			"decisions",
			"decision_answers",
			"run_cards",
		];
		for (const table of tables) {
			const [row] = await t.store.sql`SELECT count(*) AS c FROM ${t.store.sql(table)}`;
			expect(row).toEqual({ c: 0 });
		}
		const now = 1_767_225_600_000;
		await t.store
			.sql`INSERT INTO repositories ${t.store.sql({ full_name: "demo/score", owner: "demo", name: "score", created_at: now })}`;
		await t.store.sql`INSERT INTO users ${t.store.sql({ login: "demo", created_at: now })}`;
		await t.store
			.sql`INSERT INTO documents ${t.store.sql({ id: "d1", repository: "demo/score", title: "Plan", source: "# Plan", created_by: "demo", created_at: now, updated_at: now })}`;
		await t.store
			.sql`INSERT INTO document_images ${t.store.sql({ document_id: "d1", sha256: "ab", ext: "png", media_type: "image/png", size: 3, bytes: new Uint8Array([1, 2, 3]), created_at: now })}`;
		const doc = await t.store.one(
			t.store.sql`SELECT revision, archived, deleted FROM documents WHERE id = ${"d1"}`,
		);
		expect(doc).toEqual({ revision: 0, archived: 0, deleted: 0 });
		// Deleting a document takes its images with it.
		await t.store.sql`DELETE FROM documents WHERE id = ${"d1"}`;
		expect(await t.store.one(t.store.sql`SELECT count(*) AS c FROM document_images`)).toEqual({ c: 0 });
	});

	test("ping answers, and close is idempotent and final", async () => {
		const second = await openStore({ url: t.kind === "postgres" ? t.url : ":memory:" });
		await second.ping();
		await second.close();
		await second.close();
		await expect(second.ping()).rejects.toThrow();
	});
});

describe("openStore", () => {
	test("refuses URLs it does not know, without echoing them", async () => {
		const attempt = openStore({ url: "mysql://root:hunter2@db/x" });
		await expect(attempt).rejects.toBeInstanceOf(StoreError);
		await expect(attempt).rejects.toMatchObject({ code: "store-url-invalid" });
		expect((await attempt.catch((e: Error) => e.message)) as string).not.toContain("hunter2");
	});

	test("an unreachable PostgreSQL is store-unreachable, and the message has no password", async () => {
		const attempt = openStore({ url: "postgres://chopin:hunter2@127.0.0.1:1/chopin", connectionTimeout: 2 });
		const error = (await attempt.catch((e: unknown) => e)) as StoreError;
		expect(error).toBeInstanceOf(StoreError);
		expect(error.code).toBe("store-unreachable");
		expect(error.message).toContain("postgres://chopin@127.0.0.1:1/chopin");
		expect(error.message).not.toContain("hunter2");
	});

	test("one SQLite file opens once per process, and again after close", async () => {
		const dir = mkdtempSync(join(tmpdir(), "chopin-store-"));
		try {
			const url = `sqlite://${join(dir, "x.db")}`;
			const first = await openStore({ url });
			await expect(openStore({ url })).rejects.toMatchObject({ code: "store-in-use" });
			await first.close();
			const again = await openStore({ url });
			const [mode] = await again.sql`PRAGMA journal_mode`;
			expect(mode).toEqual({ journal_mode: "wal" });
			const [fk] = await again.sql`PRAGMA foreign_keys`;
			expect(fk).toEqual({ foreign_keys: 1 });
			// Durable commits (docs/server.md): FULL, so what the server acknowledged survives a power loss.
			const [sync] = await again.sql`PRAGMA synchronous`;
			expect(sync).toEqual({ synchronous: 2 });
			await again.close();
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});

	test("synced() on SQLite flushes the database's own -wal file, and close() lets the descriptor go", async () => {
		const dir = mkdtempSync(join(tmpdir(), "chopin-store-"));
		const path = join(dir, "x.db");
		const walDescriptors = () =>
			readdirSync("/proc/self/fd").filter((fd) => {
				try {
					return readlinkSync(`/proc/self/fd/${fd}`) === `${path}-wal`;
				} catch {
					return false;
				}
			}).length;
		try {
			const store = await openStore({ url: `sqlite://${path}` });
			await store.transaction(async (tx) => tx.sql`CREATE TABLE t (x TEXT)`, { durable: false });
			const before = walDescriptors();
			await store.synced();
			// SQLite's own descriptor, and the one synced() flushes through.
			expect(walDescriptors()).toBe(before + 1);
			await store.close();
			expect(walDescriptors()).toBe(0);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});

	test("a SQLite file that cannot be opened is store-unreachable", async () => {
		const attempt = openStore({ url: "sqlite:///nonexistent-dir/chopin/x.db" });
		await expect(attempt).rejects.toMatchObject({ code: "store-unreachable" });
	});

	test("the same migrations run on a fresh in-memory database", async () => {
		const store = await openStore({ url: ":memory:" });
		expect(await migrate(store)).toEqual(MIGRATIONS.map((m) => m.version));
		await store.close();
	});
});
