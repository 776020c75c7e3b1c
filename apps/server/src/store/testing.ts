// Test stores on both databases: a fresh SQLite file, and a fresh PostgreSQL schema dropped afterwards.
import { afterAll, afterEach, beforeEach, describe } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { migrate } from "./migrate";
import { openStore, type Store, type StoreKind } from "./store";

/** The PostgreSQL the tests use; each run gets a schema of its own in it. */
export const POSTGRES_TEST_URL =
	process.env.CHOPIN_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** Set by .ci/run: a missing PostgreSQL fails the tests instead of skipping them. */
export const REQUIRE_ALL = process.env.CHOPIN_TEST_REQUIRE_ALL === "1";

/** Why PostgreSQL tests cannot run here, or undefined when they can. Asked once per process. */
export const postgresUnavailable: string | undefined = await probePostgres();

let skipNoted = false;

async function probePostgres(): Promise<string | undefined> {
	const sql = new SQL({ url: POSTGRES_TEST_URL, max: 1, connectionTimeout: 3 });
	try {
		await sql`SELECT 1`;
		return undefined;
	} catch (error) {
		return `PostgreSQL at ${POSTGRES_TEST_URL} is unreachable (${(error as Error).message})`;
	} finally {
		await sql.close({ timeout: 0 }).catch(() => {});
	}
}

/** An empty database: a SQLite file in a temp dir, or a new PostgreSQL schema (via search_path in the URL). */
export interface TestDatabase {
	kind: StoreKind;
	/** For openStore, or for DATABASE_URL / DATA_DIR of a test server. */
	url: string;
	/** The temp dir that holds the SQLite file (also a good DATA_DIR); undefined for PostgreSQL. */
	dir?: string;
	/** Deletes the file or drops the schema. */
	drop(): Promise<void>;
}

export async function createTestDatabase(kind: StoreKind): Promise<TestDatabase> {
	if (kind === "sqlite") {
		const dir = mkdtempSync(join(tmpdir(), "chopin-store-"));
		return {
			kind,
			url: `sqlite://${join(dir, "chopin.db")}`,
			dir,
			drop: async () => rmSync(dir, { recursive: true, force: true }),
		};
	}
	if (postgresUnavailable) throw new Error(postgresUnavailable);
	const schema = `chopin_test_${process.pid}_${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`;
	await withAdmin((sql) => sql.unsafe(`CREATE SCHEMA ${schema}`));
	const url = new URL(POSTGRES_TEST_URL);
	url.searchParams.set("search_path", schema);
	return {
		kind,
		url: url.href,
		drop: () => withAdmin((sql) => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).then(() => {}),
	};
}

async function withAdmin<T>(fn: (sql: SQL) => Promise<T>): Promise<T> {
	const sql = new SQL({ url: POSTGRES_TEST_URL, max: 1, connectionTimeout: 5 });
	try {
		return await fn(sql);
	} finally {
		await sql.close({ timeout: 5 });
	}
}

/** A migrated store on a fresh database; close() closes it and drops the database. */
export interface TestStore {
	kind: StoreKind;
	store: Store;
	url: string;
	/** Closes the store and drops the database. */
	close(): Promise<void>;
	/** Closes the store and starts the drop, for a caller that awaits `dropped` later. */
	closeAndDrop(): Promise<{ dropped: Promise<void> }>;
}

export async function createTestStore(kind: StoreKind): Promise<TestStore> {
	const db = await createTestDatabase(kind);
	let store: Store;
	try {
		store = await openStore({ url: db.url });
		await migrate(store);
	} catch (error) {
		await db.drop();
		throw error;
	}
	return {
		kind,
		store,
		url: db.url,
		close: async () => {
			await store.close();
			await db.drop();
		},
		closeAndDrop: async () => {
			await store.close();
			return { dropped: db.drop() };
		},
	};
}

/**
 * A fresh SQLite store and, when PostgreSQL answers, a fresh PostgreSQL store. Without
 * PostgreSQL only SQLite is returned, unless CHOPIN_TEST_REQUIRE_ALL=1, where it throws.
 */
export async function testStores(): Promise<TestStore[]> {
	const kinds = runnableKinds();
	const stores: TestStore[] = [];
	try {
		for (const kind of kinds) stores.push(await createTestStore(kind));
	} catch (error) {
		await Promise.all(stores.map((s) => s.close()));
		throw error;
	}
	return stores;
}

/** The kinds this machine can test; notes a skipped PostgreSQL once, or throws when it is required. */
export function runnableKinds(): StoreKind[] {
	if (!postgresUnavailable) return ["sqlite", "postgres"];
	if (REQUIRE_ALL) throw new Error(`${postgresUnavailable}, and CHOPIN_TEST_REQUIRE_ALL=1 requires it.`);
	if (!skipNoted) {
		skipNoted = true;
		console.warn(
			`note: PostgreSQL tests are skipped: ${postgresUnavailable}. CHOPIN_TEST_REQUIRE_ALL=1 makes this a failure.`,
		);
	}
	return ["sqlite"];
}

/** What a describeStores body sees; `store` is a fresh, migrated store for each test. */
export interface StoreFixture {
	readonly kind: StoreKind;
	readonly store: Store;
	/** The database's URL, to open a second Store on it or to start a server on it. */
	readonly url: string;
}

/**
 * Declares the same tests for SQLite and for PostgreSQL: `describe("<name> [sqlite]")` and
 * `describe("<name> [postgres]")`, each test with a fresh migrated store. Without PostgreSQL
 * the second is skipped with a note, or fails under CHOPIN_TEST_REQUIRE_ALL=1.
 */
export function describeStores(name: string, body: (t: StoreFixture) => void): void {
	for (const kind of ["sqlite", "postgres"] as const) {
		const skip = kind === "postgres" && postgresUnavailable !== undefined && !REQUIRE_ALL;
		if (skip) {
			runnableKinds();
			describe.skip(`${name} [${kind}]`, () => body(fixtureOutsideTests(kind)));
			continue;
		}
		describe(`${name} [${kind}]`, () => {
			let current: TestStore | undefined;
			// Dropping a PostgreSQL schema takes a while; the drops run beside the next tests and the block waits for them at its end.
			const drops: Promise<void>[] = [];
			beforeEach(async () => {
				current = await createTestStore(kind);
			});
			afterEach(async () => {
				if (current) drops.push((await current.closeAndDrop()).dropped);
				current = undefined;
			});
			afterAll(async () => {
				await Promise.all(drops);
			});
			const need = () => {
				if (!current) throw new Error("the store fixture is only available inside a test");
				return current;
			};
			body({
				kind,
				get store() {
					return need().store;
				},
				get url() {
					return need().url;
				},
			});
		});
	}
}

function fixtureOutsideTests(kind: StoreKind): StoreFixture {
	const fail = (): never => {
		throw new Error("the store fixture is only available inside a test");
	};
	return {
		kind,
		get store() {
			return fail();
		},
		get url() {
			return fail();
		},
	};
}
