// The data layer: one Store over Bun's SQL, on SQLite or PostgreSQL, with the same queries for both.
import { AsyncLocalStorage } from "node:async_hooks";
import { resolve } from "node:path";
import { SQL, type TransactionSQL } from "bun";
import type { z } from "zod";
import { StoreError } from "./errors";
import { normaliseHelperArg, normaliseParam, normaliseRows } from "./normalise";
import { GroupSync, postgresWalFlush, sqliteWalFlush } from "./synced";

export type StoreKind = "sqlite" | "postgres";
export type Row = Record<string, unknown>;

/** What domain code queries through: the store itself, or the `tx` of a transaction. */
export interface Db {
	readonly kind: StoreKind;
	/**
	 * Bun's tagged template. Awaiting a query gives normalised rows (see normalise.ts):
	 * integers are numbers, booleans 1/0, bytes Uint8Array, on both databases.
	 */
	readonly sql: SQL;
	/** All rows, each checked against the schema when one is given. */
	many(query: PromiseLike<unknown>): Promise<Row[]>;
	many<S extends z.ZodType>(query: PromiseLike<unknown>, schema: S): Promise<z.output<S>[]>;
	/** The only row, or undefined for none; more than one is a bug and throws too-many-rows. */
	one(query: PromiseLike<unknown>): Promise<Row | undefined>;
	one<S extends z.ZodType>(query: PromiseLike<unknown>, schema: S): Promise<z.output<S> | undefined>;
}

/** The `tx` of store.transaction(): a Db whose `sql` also has savepoint(). */
export interface Tx extends Db {
	readonly sql: TransactionSQL;
}

export interface Store extends Db {
	/** Where the data lives, without a password: for logs and errors. */
	readonly label: string;
	/**
	 * Runs fn in one transaction: committed when it resolves, rolled back when it throws (the
	 * error is rethrown). Inside, query only through `tx`: the store's own `sql` throws there.
	 * On SQLite every statement of the process waits while a transaction is open, so keep
	 * network calls out of transactions.
	 */
	transaction<T>(fn: (tx: Tx) => Promise<T>, options?: TransactionOptions): Promise<T>;
	/**
	 * Resolves once every commit made before the call is on disk, lazy ones (durable: false) included, as a durable
	 * commit's own would have been. Flushes are shared: whoever asks while one runs is served by the next. For a
	 * commit whose effects may start before it is on disk but whose acknowledgement may not (synced.ts).
	 */
	synced(): Promise<void>;
	/** Resolves when the database answers a query. */
	ping(): Promise<void>;
	/** Closes the connections; idempotent. */
	close(): Promise<void>;
}

export interface TransactionOptions {
	/**
	 * false: the commit returns before it reaches the disk (SQLite's synchronous=NORMAL for this one
	 * commit, PostgreSQL's synchronous_commit=off). A crash of the process loses nothing; a crash of
	 * the machine may lose the last such commits, never part of one, and never a later durable commit
	 * without them. For writes whose loss the data already survives, such as a reply's streamed text
	 * (a reply still streaming after a restart fails anyway), or whose acknowledgement waits for synced().
	 * Default true.
	 */
	durable?: boolean;
}

export interface OpenStoreOptions {
	/** `sqlite:///abs/path.db`, `sqlite://relative.db`, `:memory:`, or `postgres://` / `postgresql://`. */
	url: string;
	/** PostgreSQL pool size (default 10). */
	max?: number;
	/** Seconds to wait for a PostgreSQL connection (default 10). */
	connectionTimeout?: number;
}

/** SQLite files open in this process: a second connection to one would block the first (see openSqlite). */
const openSqliteFiles = new Set<string>();

/** Set while a transaction's callback runs, so a query on the store's own `sql` there is caught. */
const inTransaction = new AsyncLocalStorage<{ active: boolean }>();

export async function openStore(options: OpenStoreOptions): Promise<Store> {
	const target = parseStoreUrl(options.url);
	if (target.kind === "sqlite") return openSqlite(target.path);
	return openPostgres(options, target.label);
}

type Target = { kind: "sqlite"; path: string } | { kind: "postgres"; label: string };

function parseStoreUrl(url: string): Target {
	if (url === ":memory:" || url === "sqlite::memory:" || url === "sqlite://:memory:")
		return { kind: "sqlite", path: ":memory:" };
	if (url.startsWith("sqlite://")) return { kind: "sqlite", path: resolve(url.slice("sqlite://".length)) };
	if (url.startsWith("postgres://") || url.startsWith("postgresql://")) {
		try {
			const parsed = new URL(url);
			parsed.password = "";
			parsed.search = "";
			return { kind: "postgres", label: parsed.href };
		} catch {}
	}
	// Never echo the URL: it may hold a password.
	throw new StoreError(
		"store-url-invalid",
		"The store URL must start with sqlite://, postgres:// or postgresql://, or be :memory:.",
	);
}

async function openSqlite(path: string): Promise<Store> {
	const memory = path === ":memory:";
	if (!memory && openSqliteFiles.has(path)) {
		// bun:sqlite runs on the main thread: a second connection waiting on the first's lock
		// (busy_timeout) blocks the very thread that would release it.
		throw new StoreError(
			"store-in-use",
			`The SQLite database ${path} is already open in this process.`,
			"Share one Store.",
		);
	}
	const raw = new SQL({ adapter: "sqlite", filename: path });
	try {
		await raw`PRAGMA busy_timeout = 5000`;
		// Switching a new file to WAL needs an exclusive lock, and SQLite may answer SQLITE_BUSY at
		// once, without its busy handler, while another starting process holds it: try again.
		await retryWhileBusy(() => raw`PRAGMA journal_mode = WAL`);
		await raw`PRAGMA foreign_keys = ON`;
	} catch (error) {
		await raw.close().catch(() => {});
		throw new StoreError(
			"store-unreachable",
			`Could not open the SQLite database ${path}: ${(error as Error).message}.`,
			"Check that DATA_DIR is writable.",
			{ cause: error },
		);
	}
	if (!memory) openSqliteFiles.add(path);
	const wal = memory ? undefined : sqliteWalFlush(path);
	// One connection serves every query, and Bun runs a plain query issued while a transaction
	// is open inside that transaction. The mutex makes each statement and each transaction wait
	// its turn, so a request never reads or loses another request's uncommitted work.
	return createStore({
		kind: "sqlite",
		raw,
		label: memory ? "sqlite::memory:" : `sqlite://${path}`,
		lock: new Mutex(),
		begin: (fn) => raw.begin("IMMEDIATE", fn),
		flush: wal?.flush ?? (async () => {}),
		onClose: async () => {
			openSqliteFiles.delete(path);
			await wal?.close();
		},
	});
}

/** Runs fn again while SQLite says the file is busy, for up to about 5 s (start-up only). */
async function retryWhileBusy<T>(fn: () => PromiseLike<T>): Promise<T> {
	for (let attempt = 1; ; attempt++) {
		try {
			return await fn();
		} catch (error) {
			const code = String((error as { code?: unknown }).code ?? "");
			if (attempt >= 100 || !(code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")))
				throw error;
			// Real time on purpose: this waits for another process's lock, not for anything a test drives.
			await Bun.sleep(10 + Math.floor(Math.random() * 40));
		}
	}
}

async function openPostgres(options: OpenStoreOptions, label: string): Promise<Store> {
	const raw = new SQL({
		url: options.url,
		max: options.max ?? 10,
		connectionTimeout: options.connectionTimeout ?? 10,
	});
	try {
		await raw`SELECT 1`;
	} catch (error) {
		await raw.close({ timeout: 0 }).catch(() => {});
		const password = safePassword(options.url);
		const reason = (error as Error).message.split(password || "\u0000").join("[redacted]");
		throw new StoreError(
			"store-unreachable",
			`Could not connect to PostgreSQL at ${label}: ${reason}.`,
			"Check DATABASE_URL and that PostgreSQL is running.",
			{ cause: error },
		);
	}
	return createStore({
		kind: "postgres",
		raw,
		label,
		begin: (fn) => raw.begin(fn),
		flush: postgresWalFlush(raw),
		onClose: () => {},
	});
}

function safePassword(url: string): string {
	try {
		return decodeURIComponent(new URL(url).password);
	} catch {
		return "";
	}
}

interface StoreParts {
	kind: StoreKind;
	raw: SQL;
	label: string;
	lock?: Mutex;
	begin: (fn: (tx: TransactionSQL) => Promise<unknown>) => Promise<unknown>;
	/** Puts every commit so far on disk (synced.ts). */
	flush: () => Promise<void>;
	onClose: () => void | Promise<void>;
}

function createStore(parts: StoreParts): Store {
	const { kind, raw, lock } = parts;
	let closing: Promise<void> | undefined;
	const sql = wrapSql(raw, { lock, guard: true });
	const group = new GroupSync(parts.flush);
	const store: Store = {
		kind,
		label: parts.label,
		sql,
		many,
		one,
		async transaction<T>(fn: (tx: Tx) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
			guardNotInTransaction();
			const lazy = options.durable === false;
			const run = () =>
				parts.begin(async (rawTx) => {
					if (lazy && kind === "postgres") await rawTx`SET LOCAL synchronous_commit = off`;
					const scope = { active: true };
					const tx: Tx = { kind, sql: wrapSql(rawTx, { guard: false }), many, one };
					try {
						return await inTransaction.run(scope, () => fn(tx));
					} finally {
						scope.active = false;
					}
				}) as Promise<T>;
			const body = lazy && kind === "sqlite" ? () => unsynced(raw, run) : run;
			return lock ? lock.run(body) : body();
		},
		synced() {
			return group.synced();
		},
		async ping() {
			await sql`SELECT 1 AS ok`;
		},
		close() {
			closing ??= (async () => {
				try {
					await (lock ? lock.run(() => raw.close({ timeout: 5 })) : raw.close({ timeout: 5 }));
				} finally {
					await parts.onClose();
				}
			})();
			return closing;
		},
	};
	return store;
}

async function many(query: PromiseLike<unknown>, schema?: z.ZodType): Promise<Row[]> {
	const rows = (await query) as Row[];
	return schema ? rows.map((row) => parseRow(schema, row)) : rows;
}

async function one(query: PromiseLike<unknown>, schema?: z.ZodType): Promise<Row | undefined> {
	const rows = (await query) as Row[];
	if (rows.length > 1) throw new StoreError("too-many-rows", `Expected at most one row, got ${rows.length}.`);
	const row = rows[0];
	return row && schema ? parseRow(schema, row) : row;
}

function parseRow(schema: z.ZodType, row: Row): Row {
	const result = schema.safeParse(row);
	if (result.success) return result.data as Row;
	const issue = result.error.issues[0]!;
	throw new StoreError(
		"row-invalid",
		`A stored row does not match its schema: ${issue.path.join(".") || "row"}: ${issue.message}.`,
	);
}

function guardNotInTransaction(): void {
	if (inTransaction.getStore()?.active) {
		throw new StoreError(
			"outside-transaction",
			"A query used the store itself inside store.transaction().",
			"Inside a transaction, query through its tx (tx.sql, tx.one, tx.many).",
		);
	}
}

/**
 * Runs fn with SQLite's synchronous=NORMAL, then puts the level back: in WAL mode a commit is then
 * written but not synced, and the next synced commit syncs it too. SQLite refuses to change the level
 * inside a transaction, so this wraps the whole transaction, behind the lock.
 */
async function unsynced<T>(raw: SQL, fn: () => Promise<T>): Promise<T> {
	const [level] = (await raw`PRAGMA synchronous`) as { synchronous: number }[];
	await raw`PRAGMA synchronous = NORMAL`;
	try {
		return await fn();
	} finally {
		await raw.unsafe(`PRAGMA synchronous = ${Number(level?.synchronous ?? 2)}`);
	}
}

/** Statements run one after another: each caller waits for the ones before it. */
class Mutex {
	#tail: Promise<unknown> = Promise.resolve();

	run<T>(fn: () => Promise<T>): Promise<T> {
		const result = this.#tail.then(fn);
		this.#tail = result.then(
			() => {},
			() => {},
		);
		return result;
	}
}

const STORE_ONLY = new Set<PropertyKey>([
	"begin",
	"transaction",
	"reserve",
	"close",
	"beginDistributed",
	"distributed",
]);

/**
 * Wraps Bun's `sql` so that every query it makes, when awaited, runs behind the lock (SQLite),
 * refuses to run inside another transaction (guard), and resolves with normalised rows; and so
 * that parameters are normalised on the way in. Building fragments and helpers works as with
 * Bun's own `sql`: queries stay lazy until awaited.
 */
function wrapSql<T extends SQL>(raw: T, mode: { lock?: Mutex; guard: boolean }): T {
	const patch = (query: unknown) => {
		if (!(query instanceof Promise)) return query;
		const start = query.then.bind(query);
		const run = () =>
			new Promise<unknown>((res, rej) => start(res, rej)).then((rows) => {
				normaliseRows(rows);
				return rows;
			});
		// Bun starts a query in then(); overriding it on the instance lets the lock decide when.
		// biome-ignore lint/suspicious/noThenProperty: the query is a promise; this replaces its own then.
		Object.defineProperty(query, "then", {
			configurable: true,
			value(onFulfilled?: (v: unknown) => unknown, onRejected?: (e: unknown) => unknown) {
				let result: Promise<unknown>;
				try {
					if (mode.guard) guardNotInTransaction();
					result = mode.lock ? mode.lock.run(run) : run();
				} catch (error) {
					result = Promise.reject(error);
				}
				return result.then(onFulfilled, onRejected);
			},
		});
		return query;
	};
	return new Proxy(raw, {
		apply(target, thisArg, args: unknown[]) {
			const first = args[0];
			if (Array.isArray(first) && Object.hasOwn(first, "raw")) {
				return patch(Reflect.apply(target, thisArg, [first, ...args.slice(1).map(normaliseParam)]));
			}
			return Reflect.apply(target, thisArg, [normaliseHelperArg(first), ...args.slice(1)]);
		},
		get(target, prop) {
			if (prop === "unsafe" || prop === "file") {
				return (...args: unknown[]) => patch((target[prop] as (...a: unknown[]) => unknown)(...args));
			}
			if (mode.guard && STORE_ONLY.has(prop)) {
				return () => {
					throw new Error(
						`store.sql.${String(prop)} is not available: use store.transaction() and store.close().`,
					);
				};
			}
			if (prop === "savepoint") {
				const savepoint = Reflect.get(target, prop) as (...a: unknown[]) => Promise<unknown>;
				return (...args: unknown[]) => {
					const fn = args.pop() as (sp: SQL) => unknown;
					return savepoint.call(target, ...args, (sp: SQL) => fn(wrapSql(sp, mode)));
				};
			}
			const value = Reflect.get(target, prop);
			return typeof value === "function" ? value.bind(target) : value;
		},
	}) as T;
}
