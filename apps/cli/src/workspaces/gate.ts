// One busy check per repository: every git write the connector makes to a checkout (keep refs, bringing a
// workspace's branches back, the clone and fetch under <state>/repos) waits its turn here, runs and Planners alike.
import { realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

/**
 * An async mutex per repository, keyed by its common git dir (a linked worktree of the person's and
 * its main checkout share refs and objects, so they share a turn). The daemon makes one and hands it
 * to the Planner backends and the runs, so two of them never hold the same `.git`'s ref locks at
 * once. It orders this process only; against the person's own git and another chopin process the
 * connector's git waits on git's own locks (see guarded-git.ts, the lock timeouts).
 */
export class CheckoutGate {
	readonly #tails = new Map<string, Promise<void>>();

	/** Runs `write` once every earlier writer of the same repository has finished; its result or error is the caller's. */
	async run<T>(repository: string, write: () => Promise<T>): Promise<T> {
		const key = gateKey(repository);
		const previous = this.#tails.get(key) ?? Promise.resolve();
		let release!: () => void;
		const mine = new Promise<void>((done) => {
			release = done;
		});
		const tail = previous.then(() => mine);
		this.#tails.set(key, tail);
		await previous;
		try {
			return await write();
		} finally {
			release();
			if (this.#tails.get(key) === tail) this.#tails.delete(key);
		}
	}

	/** Whether a writer holds or waits for this repository's turn. */
	busy(repository: string): boolean {
		return this.#tails.has(gateKey(repository));
	}
}

/** The same key for every spelling of a path (symlinks, `..`); a path not made yet is keyed by its real parent. */
export function gateKey(path: string): string {
	const absolute = resolve(path);
	try {
		return realpathSync(absolute);
	} catch {
		try {
			return join(realpathSync(dirname(absolute)), basename(absolute));
		} catch {
			return absolute;
		}
	}
}
