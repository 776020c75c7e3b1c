// Applies the versioned migrations at start-up: each once, in its own transaction, safe when several processes start at once.
import { StoreError } from "./errors";
import { MIGRATIONS, type Migration } from "./migrations/index";
import type { Db, Store } from "./store";

export interface MigrateOptions {
	migrations?: readonly Migration[];
	/** For schema_migrations.applied_at. */
	now?: () => number;
}

/**
 * Brings the database up to the newest migration and returns the versions it applied.
 * PostgreSQL: every step holds a transaction-scoped advisory lock (one per schema), so
 * concurrent starts take turns and each migration runs once. SQLite: a transaction begins
 * IMMEDIATE, taking the write lock first, with the same effect across processes.
 */
export async function migrate(store: Store, options: MigrateOptions = {}): Promise<number[]> {
	const migrations = options.migrations ?? MIGRATIONS;
	const now = options.now ?? Date.now;
	await store.transaction(async (tx) => {
		await lock(tx);
		await tx.sql.unsafe(
			"CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)",
		);
		const newest = await tx.one(tx.sql`SELECT max(version) AS version FROM schema_migrations`);
		const known = migrations.at(-1)?.version ?? 0;
		const version = Number(newest?.version ?? 0);
		if (version > known) {
			throw new StoreError(
				"store-too-new",
				`The database is at migration ${version}, newer than this server knows (${known}).`,
				"Run the newer server version, or restore a backup taken before the upgrade.",
			);
		}
	});
	const applied: number[] = [];
	for (const migration of migrations) {
		const done = await store.transaction(async (tx) => {
			await lock(tx);
			const row = await tx.one(
				tx.sql`SELECT version FROM schema_migrations WHERE version = ${migration.version}`,
			);
			if (row) return false;
			await tx.sql.unsafe(migration.sql).simple();
			await tx.sql`INSERT INTO schema_migrations ${tx.sql({ version: migration.version, name: migration.name, applied_at: now() })}`;
			return true;
		});
		if (done) applied.push(migration.version);
	}
	return applied;
}

/** The versions a database has, in order. */
export async function appliedMigrations(db: Db): Promise<number[]> {
	const rows = await db.many(db.sql`SELECT version FROM schema_migrations ORDER BY version`);
	return rows.map((r) => Number(r.version));
}

async function lock(tx: Db): Promise<void> {
	if (tx.kind !== "postgres") return;
	// One lock per schema: test runs that each use their own schema do not wait for one another.
	await tx.sql`SELECT pg_advisory_xact_lock(hashtext('chopin.migrate.' || current_schema()))`;
}
