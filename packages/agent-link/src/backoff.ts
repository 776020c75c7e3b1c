/**
 * Retry delays as an object: capped, jittered, reset after a success. Two shapes cover the
 * product: a fixed schedule (the machine's reconnects: 1, 2, 5, 10, 20, 30 s, then every
 * minute) and exponential doubling (a Planner backend's restarts: up to 1 s, doubling to 5 min).
 */

export interface BackoffOptions {
	/** Base delay for attempt n (0-based), before jitter. */
	delay: (attempt: number) => number;
	/**
	 * Fraction of the delay that is random: 0 keeps it exact, 1 draws uniformly from
	 * [0, delay] ("full jitter"). Spreads a crowd of clients that failed at the same moment.
	 */
	jitter?: number;
	random?: () => number;
}

export class Backoff {
	#attempt = 0;
	readonly #delay: (attempt: number) => number;
	readonly #jitter: number;
	readonly #random: () => number;

	constructor(options: BackoffOptions) {
		this.#delay = options.delay;
		this.#jitter = Math.min(1, Math.max(0, options.jitter ?? 0));
		this.#random = options.random ?? Math.random;
	}

	/** A fixed list of delays; the last one repeats forever. */
	static schedule(delays: readonly number[], options: Omit<BackoffOptions, "delay"> = {}): Backoff {
		if (delays.length === 0) throw new Error("a backoff schedule needs at least one delay");
		return new Backoff({ ...options, delay: (n) => delays[Math.min(n, delays.length - 1)]! });
	}

	/** initial, then doubling (or `factor`), never above max. */
	static exponential(
		options: { initial: number; max: number; factor?: number } & Omit<BackoffOptions, "delay">,
	): Backoff {
		const factor = options.factor ?? 2;
		return new Backoff({
			...options,
			delay: (n) => Math.min(options.max, options.initial * factor ** Math.min(n, 64)),
		});
	}

	/** Attempts made since the last reset. */
	get attempts(): number {
		return this.#attempt;
	}

	/** The delay before the next attempt; counts the attempt. */
	next(): number {
		const base = this.#delay(this.#attempt++);
		return Math.round(base * (1 - this.#jitter + this.#jitter * this.#random()));
	}

	/** Starts the schedule over, after a success. */
	reset(): void {
		this.#attempt = 0;
	}
}

/** The machine's reconnect schedule (DESIGN.md, Reconnect). */
export const RECONNECT_SCHEDULE_MS = [1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 60_000] as const;

/** The reconnect schedule; `maxMs` caps its steps (a daemon's CHOPIN_CONTROL_RETRY_MAX_MS, for tests and benches). */
export function reconnectBackoff(options: Omit<BackoffOptions, "delay"> & { maxMs?: number } = {}): Backoff {
	const { maxMs, ...rest } = options;
	const delays =
		maxMs === undefined ? RECONNECT_SCHEDULE_MS : RECONNECT_SCHEDULE_MS.map((d) => Math.min(d, maxMs));
	return Backoff.schedule(delays, { jitter: 0.2, ...rest });
}

/** A Planner backend's restart backoff (agent-connection.md, Planner backend commands). */
export function restartBackoff(options: Omit<BackoffOptions, "delay"> = {}): Backoff {
	return Backoff.exponential({ initial: 1_000, max: 300_000, jitter: 1, ...options });
}
