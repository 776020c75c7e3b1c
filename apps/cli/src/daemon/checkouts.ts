// The checkouts the daemon serves, each held by its lock for as long as it is served (one daemon per checkout),
// with the branch and HEAD commit they are at (a person starting a build on the page is offered that commit).
import { type HeldLock, lockCheckout } from "../local/lock";
import type { Logger } from "../local/log";
import { currentBranch, type GitDeps, headCommit } from "../machine/git";
import type { Checkout } from "../machine/machine-config";

/** Where a served checkout is now: its branch (none when detached) and HEAD (none before the first commit). */
export interface CheckoutPosition {
	branch?: string;
	head?: string;
}

export class ServedCheckouts {
	readonly #held = new Map<string, { checkout: Checkout; lock: HeldLock; position?: CheckoutPosition }>();
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

	/** Where each served checkout was when last looked at (refreshPositions), by path. */
	position(path: string): CheckoutPosition | undefined {
		return this.#held.get(key(path))?.position;
	}

	/**
	 * Asks git where every served checkout is now; true when any moved (a commit, a branch switch), so the
	 * caller reports it. A checkout git cannot read keeps what was known.
	 */
	async refreshPositions(git: GitDeps): Promise<boolean> {
		let moved = false;
		for (const entry of this.#held.values()) {
			const [branch, head] = await Promise.all([
				currentBranch(git, entry.checkout.path).catch(() => entry.position?.branch),
				headCommit(git, entry.checkout.path).catch(() => entry.position?.head),
			]);
			const next = { ...(branch && { branch }), ...(head && { head }) };
			if (JSON.stringify(next) !== JSON.stringify(entry.position ?? {})) moved = true;
			entry.position = next;
		}
		return moved;
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
