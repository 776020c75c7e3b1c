// store.synced(): the disk flush a lazy commit (durable: false) skipped, taken later and off the request's path, and
// shared by everyone who asks while one is under way (a group commit). A person's message uses it: the Planner's
// turn leaves as soon as the message is committed, and the sender is answered only once it is on disk.
import { type FileHandle, open } from "node:fs/promises";
import type { SQL } from "bun";

/**
 * Runs `flush` so that each caller is answered by a flush that began after it asked: a caller that comes while one
 * runs waits for the next, which serves every caller that came meanwhile (one flush for all of them).
 */
export class GroupSync {
	#running: Promise<void> | undefined;
	#next: Promise<void> | undefined;

	constructor(private readonly flush: () => Promise<void>) {}

	synced(): Promise<void> {
		if (!this.#running) return this.#start();
		// The flush under way may have begun before this caller's commit: it cannot answer for it.
		this.#next ??= this.#running.then(
			() => this.#start(),
			() => this.#start(),
		);
		return this.#next;
	}

	#start(): Promise<void> {
		this.#next = undefined;
		const running = this.flush().finally(() => {
			if (this.#running === running) this.#running = undefined;
		});
		this.#running = running;
		return running;
	}
}

/**
 * SQLite in WAL mode: a lazy commit is written to the `-wal` file but not synced. fsync of that file (any descriptor
 * of it) puts every commit written so far on disk, as synchronous=FULL would have at each commit; it runs on Bun's
 * file-system threads, so the event loop (and every socket it serves) goes on meanwhile.
 */
export function sqliteWalFlush(databasePath: string): {
	flush: () => Promise<void>;
	close: () => Promise<void>;
} {
	let handle: Promise<FileHandle | undefined> | undefined;
	const wal = () =>
		(handle ??= open(`${databasePath}-wal`, "r+").catch((error: NodeJS.ErrnoException) => {
			// No -wal file: nothing was written since the last checkpoint put everything in the database file (a
			// checkpoint syncs it). Asked again next time, since the next write creates one.
			handle = undefined;
			if (error.code === "ENOENT") return undefined;
			throw error;
		}));
	return {
		flush: async () => {
			await (await wal())?.sync();
		},
		close: async () => {
			const file = await handle?.catch(() => undefined);
			handle = undefined;
			await file?.close();
		},
	};
}

/**
 * PostgreSQL: a commit waits for the WAL to be flushed up to its own record (synchronous_commit on) only when its
 * transaction wrote WAL; taking a transaction id alone does not. A transactional logical message is such a write,
 * needs no table and no privilege, and is ignored by everything but logical decoding. Its commit flushes every
 * earlier commit too. One round trip.
 */
export function postgresWalFlush(raw: SQL): () => Promise<void> {
	return async () => {
		await raw`SELECT pg_logical_emit_message(true, 'chopin-synced', '') IS NOT NULL AS ok`;
	};
}
