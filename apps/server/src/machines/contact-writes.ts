// Machines' last contact from HTTP calls, gathered in memory and written together: a storm of first contacts
// (10,000 machines back at once) was one UPDATE each on the request path, each a commit the request waited
// for. Now a call notes the time and returns; every CONTACT_FLUSH_MS the due ones are written, CONTACT_ROWS
// machines per statement, and what is left is written at stop. last_contact_at is then at most
// CONTACT_FLUSH_MS (plus a write's own time) behind a contact already at most TOUCH_EVERY_MS old
// (machine-auth.ts); docs/server.md, Machines' last contact, lists who reads it and why that is enough. A
// time is never written over a later one (the control channel writes its own contact directly).
import type { Clock, Timer } from "@chopin/agent-link/clock";
import type { Logger } from "../log";
import type { Store } from "../store/store";

/** How long a noted contact waits, at most, before it is written. */
export const CONTACT_FLUSH_MS = 1_000;
/** Machines per statement: one holds SQLite's (event-loop) connection for a few milliseconds at most. */
export const CONTACT_ROWS = 200;

export class ContactWrites {
	/** Machine id to the latest contact noted and not yet written. */
	readonly #pending = new Map<string, number>();
	#timer: Timer | undefined;
	/** The flush being written, so flushes never overlap and stop() waits for the last. */
	#writing: Promise<void> = Promise.resolve();
	#stopped = false;

	constructor(private readonly deps: { store: Store; clock: Clock; log: Logger; flushMs?: number }) {}

	/** Records contact from the machine at `at`; written within the flush interval. */
	note(machineId: string, at: number): void {
		const known = this.#pending.get(machineId);
		if (known === undefined || known < at) this.#pending.set(machineId, at);
		this.#schedule();
	}

	/** Writes every noted contact now; resolves once written (or its failure logged and kept for the next). */
	flush(): Promise<void> {
		this.#timer?.cancel();
		this.#timer = undefined;
		const next = this.#writing.then(() => this.#write());
		this.#writing = next;
		return next;
	}

	/** Resolves once the writes already under way are done, starting none (tests wait on the timer's flush so). */
	settled(): Promise<void> {
		return this.#writing;
	}

	/** At server stop: what is noted is written, and later notes are written by the next flush() only. */
	async stop(): Promise<void> {
		this.#stopped = true;
		await this.flush();
	}

	#schedule(): void {
		if (this.#timer || this.#stopped) return;
		this.#timer = this.deps.clock.setTimeout(() => {
			this.#timer = undefined;
			void this.flush();
		}, this.deps.flushMs ?? CONTACT_FLUSH_MS);
	}

	async #write(): Promise<void> {
		if (this.#pending.size === 0) return;
		const { store, log } = this.deps;
		const due = [...this.#pending];
		this.#pending.clear();
		for (let start = 0; start < due.length; start += CONTACT_ROWS) {
			// SQLite's statements run on the event loop: requests get their turn between two statements.
			if (start > 0) await new Promise((resolve) => setImmediate(resolve));
			const rows = due.slice(start, start + CONTACT_ROWS);
			try {
				// Not durable: a power loss forgets at most the last second's contact times, which the next
				// call from each machine writes again; waiting for the disk is what the batch saves.
				await store.transaction(
					async (tx) => {
						let values = tx.sql`(${rows[0]![0]}, ${rows[0]![1]})`;
						for (const [id, at] of rows.slice(1)) values = tx.sql`${values}, (${id}, ${at})`;
						await tx.sql`WITH contact (id, at) AS (VALUES ${values})
							UPDATE machines SET last_contact_at = contact.at FROM contact
							WHERE machines.id = contact.id AND machines.last_contact_at < contact.at`;
					},
					{ durable: false },
				);
			} catch (error) {
				log.error("machines' last contact could not be written; kept for the next flush", {
					machines: rows.length,
					error,
				});
				for (const [id, at] of rows) {
					const known = this.#pending.get(id);
					if (known === undefined || known < at) this.#pending.set(id, at);
				}
				this.#schedule();
			}
		}
	}
}
