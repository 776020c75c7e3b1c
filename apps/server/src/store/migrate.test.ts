import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { appliedMigrations, migrate } from "./migrate";
import { defineMigrations, MIGRATIONS } from "./migrations/index";
import { openStore } from "./store";
import { createTestDatabase, describeStores, postgresUnavailable, REQUIRE_ALL } from "./testing";

const STORE_MODULE = join(import.meta.dir, "store.ts");
const MIGRATE_MODULE = join(import.meta.dir, "migrate.ts");

/** Starts a real process that opens the database and migrates it; resolves with what it applied. */
async function migrateInChild(url: string): Promise<number[]> {
	const code = `
		import { openStore } from ${JSON.stringify(STORE_MODULE)};
		import { migrate } from ${JSON.stringify(MIGRATE_MODULE)};
		const store = await openStore({ url: process.env.STORE_URL });
		try { console.log(JSON.stringify(await migrate(store))); } finally { await store.close(); }
	`;
	const child = Bun.spawn(["bun", "-e", code], {
		env: { ...process.env, STORE_URL: url },
		stdout: "pipe",
		stderr: "pipe",
	});
	const [out, err, exit] = await Promise.all([
		new Response(child.stdout).text(),
		new Response(child.stderr).text(),
		child.exited,
	]);
	if (exit !== 0) throw new Error(`migrating child exited ${exit}: ${err}`);
	return JSON.parse(out.trim()) as number[];
}

/** Every version the server ships, in order. */
const ALL = MIGRATIONS.map((m) => m.version);

describeStores("migrate", (t) => {
	test("a migrated database migrates again to nothing", async () => {
		expect(await appliedMigrations(t.store)).toEqual(MIGRATIONS.map((m) => m.version));
		expect(await migrate(t.store)).toEqual([]);
		expect(await appliedMigrations(t.store)).toEqual(ALL);
	});

	test("later migrations apply once, in order, each in its own transaction", async () => {
		const next = ALL.length + 1;
		const file = (version: number, name: string) => `${String(version).padStart(4, "0")}_${name}`;
		const more = defineMigrations({
			...Object.fromEntries(MIGRATIONS.map((m) => [file(m.version, m.name), m.sql])),
			[file(next, "notes")]: "CREATE TABLE notes (id TEXT PRIMARY KEY); CREATE INDEX notes_id ON notes (id);",
			[file(next + 1, "broken")]: "CREATE TABLE half (id TEXT); SELECT * FROM no_such_table;",
		});
		await expect(migrate(t.store, { migrations: more, now: () => 42 })).rejects.toThrow();
		// The first new one committed; the second rolled back whole, its first statement included.
		expect(await appliedMigrations(t.store)).toEqual([...ALL, next]);
		await expect(t.store.sql`SELECT * FROM half`).rejects.toThrow();
		const row = await t.store.one(
			t.store.sql`SELECT name, applied_at FROM schema_migrations WHERE version = ${next}`,
		);
		expect(row).toEqual({ name: "notes", applied_at: 42 });
	});

	test("a database newer than the server is refused", async () => {
		await t.store
			.sql`INSERT INTO schema_migrations ${t.store.sql({ version: 99, name: "future", applied_at: 1 })}`;
		await expect(migrate(t.store)).rejects.toMatchObject({ code: "store-too-new" });
	});

	test("processes migrating one fresh database at once apply each migration exactly once", async () => {
		const db = await createTestDatabase(t.kind);
		try {
			const results = await Promise.all(Array.from({ length: 5 }, () => migrateInChild(db.url)));
			expect(results.flat().sort()).toEqual(ALL);
			const store = await openStore({ url: db.url });
			try {
				expect(await appliedMigrations(store)).toEqual(ALL);
			} finally {
				await store.close();
			}
		} finally {
			await db.drop();
		}
	}, 30_000);
});

describe("migrate on PostgreSQL, several stores in one process", () => {
	test.skipIf(postgresUnavailable !== undefined && !REQUIRE_ALL)(
		"concurrent migrations in one process also apply once",
		async () => {
			const db = await createTestDatabase("postgres");
			const stores = await Promise.all([1, 2, 3, 4].map(() => openStore({ url: db.url })));
			try {
				const results = await Promise.all(stores.map((s) => migrate(s)));
				expect(results.flat().sort()).toEqual(ALL);
			} finally {
				await Promise.all(stores.map((s) => s.close()));
				await db.drop();
			}
		},
	);
});

describe("the migration list", () => {
	test("lists every file in migrations/, numbered from 1 without gaps", () => {
		const files = readdirSync(join(import.meta.dir, "migrations"))
			.filter((f) => /^\d{4}_.*\.ts$/.test(f) && !f.endsWith(".test.ts"))
			.sort();
		expect(files.map((f) => f.replace(/\.ts$/, ""))).toEqual(
			MIGRATIONS.map((m) => `${String(m.version).padStart(4, "0")}_${m.name}`),
		);
	});

	test("refuses gaps and bad names", () => {
		expect(() => defineMigrations({ "0002_x": "" })).toThrow(/out of order/);
		expect(() => defineMigrations({ "1_x": "" })).toThrow(/NNNN_<name>/);
	});
});
