// The streaming replies' paced body writes, gathered on a shared grid: every reply whose write falls due in
// the same slot is written then, a few rows per transaction. Bun's SQLite runs inside the event loop that
// also serves every socket, so a slot neither waits for the disk (durable: false: a reply still streaming
// when the machine stops fails on restart anyway, and finish's own commit syncs the text written before
// it) nor holds the loop for all its rows at once (64 long bodies in one transaction took 10 to 26 ms,
// which every live delta then waited for): it yields between transactions of ROWS_PER_COMMIT rows.
import type { Store } from "../store/store";

/** Rows per transaction of a slot: few enough that one holds the event loop for about a millisecond. */
export const ROWS_PER_COMMIT = 8;

/** One reply's part of a slot: its text is taken when the slot is written, so later deltas join it. */
export interface BodyWrite {
	messageId: string;
	/** The reply's text not yet written, taken now ("" when there is none). */
	take(): string;
}

interface Slot {
	key: number;
	timer: ReturnType<typeof setTimeout>;
	writes: BodyWrite[];
	done: PromiseWithResolvers<void>;
}

export class BodyWrites {
	readonly #slots = new Map<number, Slot>();

	constructor(
		private readonly store: Store,
		private readonly now: () => number,
		/** The grid's step in real milliseconds (performance.now()). */
		private readonly step: number,
	) {}

	/**
	 * Writes the reply's text in the first slot at or after `due` (performance.now()); resolves with the
	 * slot's time once it is committed. `hurry` writes the slot at once (the reply is finishing).
	 */
	schedule(due: number, write: BodyWrite): { written: Promise<number>; hurry: () => void } {
		const key = Math.max(Math.ceil(due / this.step), Math.ceil(performance.now() / this.step)) * this.step;
		let slot = this.#slots.get(key);
		if (!slot) {
			const created: Slot = {
				key,
				timer: setTimeout(() => this.#run(created), Math.max(0, key - performance.now())),
				writes: [],
				done: Promise.withResolvers<void>(),
			};
			slot = created;
			this.#slots.set(key, slot);
		}
		slot.writes.push(write);
		const taken = slot;
		return {
			written: taken.done.promise.then(() => taken.key),
			hurry: () => {
				if (this.#slots.get(taken.key) !== taken) return;
				clearTimeout(taken.timer);
				this.#run(taken);
			},
		};
	}

	#run(slot: Slot): void {
		if (this.#slots.get(slot.key) !== slot) return;
		this.#slots.delete(slot.key);
		const texts = slot.writes.map((write) => ({ id: write.messageId, text: write.take() }));
		const now = this.now();
		const written = texts.filter((t) => t.text !== "");
		const commit = (async () => {
			for (let start = 0; start < written.length; start += ROWS_PER_COMMIT) {
				if (start > 0) await new Promise((resolve) => setImmediate(resolve));
				const rows = written.slice(start, start + ROWS_PER_COMMIT);
				await this.store.transaction(
					async (tx) => {
						for (const { id, text } of rows) {
							await tx.sql`UPDATE chat_messages SET body = body || ${text}, updated_at = ${now} WHERE id = ${id}`;
						}
					},
					{ durable: false },
				);
			}
		})();
		commit.then(
			() => slot.done.resolve(),
			(error: unknown) => slot.done.reject(error),
		);
	}
}
