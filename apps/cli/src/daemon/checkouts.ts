// The checkouts the daemon serves, each held by its lock for as long as it is served (one daemon per checkout).
import { type HeldLock, lockCheckout } from "../local/lock";
import type { Logger } from "../local/log";
import type { Checkout } from "../machine/machine-config";

export class ServedCheckouts {
	readonly #held = new Map<string, { checkout: Checkout; lock: HeldLock }>();
	readonly #locksDir: string;
	readonly #log: Logger;
	readonly #now: () => number;

	constructor(options: { locksDir: string; log: Logger; now: () => number }) {
		this.#locksDir = options.locksDir;
		this.#log = options.log;
		this.#now = options.now;
	}

	/** Every served checkout, in the order they were added. */
	list(): Checkout[] {
		return [...this.#held.values()].map((entry) => entry.checkout);
	}

	has(path: string): boolean {
		return this.#held.has(key(path));
	}

	/**
	 * Locks and serves a checkout; false when it is already served (its details are refreshed).
	 * A lock held by a live process is refused with checkout-locked naming its pid; a dead
	 * holder's is replaced.
	 */
	async add(checkout: Checkout): Promise<boolean> {
		const existing = this.#held.get(key(checkout.path));
		if (existing) {
			existing.checkout = checkout;
			return false;
		}
		const lock = await lockCheckout(
			{
				locksDir: this.#locksDir,
				now: this.#now,
				onCompromised: (error) =>
					this.#log.error({ err: error, checkout: checkout.path }, "a checkout lock was lost while held"),
			},
			checkout.path,
		);
		this.#held.set(key(checkout.path), { checkout, lock });
		this.#log.info({ checkout: checkout.path, repository: checkout.repository }, "serving checkout");
		return true;
	}

	/** Stops serving a checkout and gives its lock back; removing one not served is fine. */
	async remove(path: string): Promise<boolean> {
		const entry = this.#held.get(key(path));
		if (!entry) return false;
		this.#held.delete(key(path));
		await entry.lock.release();
		this.#log.info({ checkout: path }, "stopped serving checkout");
		return true;
	}

	async releaseAll(): Promise<void> {
		for (const path of [...this.#held.keys()]) await this.remove(path);
	}
}

/** A trailing slash never makes another checkout. */
function key(path: string): string {
	return path.length > 1 ? path.replace(/[\\/]+$/, "") : path;
}
