/**
 * Time as a dependency. Everything time-based (pings, timeouts, grace periods, backoff,
 * credential renewal) takes a Clock, so tests drive hours of schedule in milliseconds.
 */

export interface Timer {
	cancel(): void;
}

export interface Clock {
	/** Milliseconds since the epoch. */
	now(): number;
	/** Calls fn once after ms. */
	setTimeout(fn: () => void, ms: number): Timer;
	/** Resolves after ms; rejects with the signal's reason when it aborts first. */
	sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function abortReason(signal: AbortSignal): unknown {
	return signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
}

function sleepWith(clock: Pick<Clock, "setTimeout">, ms: number, signal?: AbortSignal): Promise<void> {
	return new Promise((resolve, reject) => {
		if (signal?.aborted) return reject(abortReason(signal));
		const onAbort = () => {
			timer.cancel();
			reject(abortReason(signal!));
		};
		const timer = clock.setTimeout(() => {
			signal?.removeEventListener("abort", onAbort);
			resolve();
		}, ms);
		signal?.addEventListener("abort", onAbort, { once: true });
	});
}

/** The real clock. Timers do not keep a process alive on their own when `unref` is set. */
export function systemClock(options: { unref?: boolean } = {}): Clock {
	const clock: Clock = {
		now: () => Date.now(),
		setTimeout(fn, ms) {
			const handle = setTimeout(fn, Math.max(0, ms));
			if (options.unref) (handle as { unref?: () => void }).unref?.();
			return { cancel: () => clearTimeout(handle) };
		},
		sleep: (ms, signal) => sleepWith(clock, ms, signal),
	};
	return clock;
}

interface Pending {
	at: number;
	seq: number;
	fn: () => void;
}

/**
 * A clock that only moves when told to. `advance(ms)` fires due timers in time order, letting
 * promise callbacks run between them, so code awaiting a sleep sees the next timer it sets.
 */
export class ManualClock implements Clock {
	#now: number;
	#seq = 0;
	#timers = new Set<Pending>();

	constructor(start = Date.UTC(2026, 0, 1)) {
		this.#now = start;
	}

	now(): number {
		return this.#now;
	}

	setTimeout(fn: () => void, ms: number): Timer {
		const timer: Pending = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn };
		this.#timers.add(timer);
		return { cancel: () => this.#timers.delete(timer) };
	}

	sleep(ms: number, signal?: AbortSignal): Promise<void> {
		return sleepWith(this, ms, signal);
	}

	/** How many timers are waiting. */
	get pending(): number {
		return this.#timers.size;
	}

	/** When the next timer fires, or undefined when none waits. */
	nextAt(): number | undefined {
		return this.#due(Number.POSITIVE_INFINITY)?.at;
	}

	/** Moves time forward by ms, firing every timer that falls due on the way. */
	async advance(ms: number): Promise<void> {
		const target = this.#now + ms;
		for (;;) {
			await flushMicrotasks();
			const next = this.#due(target);
			if (!next) break;
			this.#timers.delete(next);
			this.#now = Math.max(this.#now, next.at);
			next.fn();
		}
		this.#now = target;
		await flushMicrotasks();
	}

	/** Jumps to the next timer and fires it (and any due at the same instant). */
	async next(): Promise<void> {
		const at = this.nextAt();
		if (at !== undefined) await this.advance(at - this.#now);
	}

	#due(limit: number): Pending | undefined {
		let best: Pending | undefined;
		for (const t of this.#timers) {
			if (t.at > limit) continue;
			if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
		}
		return best;
	}
}

async function flushMicrotasks(): Promise<void> {
	for (let i = 0; i < 10; i++) await Promise.resolve();
}
