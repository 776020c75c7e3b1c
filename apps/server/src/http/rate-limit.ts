// A token-bucket rate limiter keyed by a string (an address, a pairing id), on the injected clock.
import type { Clock } from "@chopin/agent-link/clock";
import { HttpError } from "./errors";

export interface RateLimitOptions {
	/** The most requests allowed in a burst: a bucket starts full with this many tokens. */
	capacity: number;
	/** One token comes back every this many milliseconds, up to `capacity`. */
	refillMs: number;
	clock: Pick<Clock, "now">;
	/** Buckets kept at most; beyond it, full (idle) buckets are dropped first, then the oldest. */
	maxKeys?: number;
}

export type RateDecision = { ok: true; remaining: number } | { ok: false; retryAfterMs: number };

interface Bucket {
	tokens: number;
	/** When `tokens` was last brought up to date. */
	at: number;
}

export class RateLimiter {
	readonly #buckets = new Map<string, Bucket>();
	readonly #options: Required<RateLimitOptions>;

	constructor(options: RateLimitOptions) {
		if (options.capacity < 1 || options.refillMs <= 0) throw new Error("RateLimiter: bad options");
		this.#options = { maxKeys: 10_000, ...options };
	}

	/** Takes `cost` tokens for key when it has them; otherwise says how long until it will. */
	take(key: string, cost = 1): RateDecision {
		const now = this.#options.clock.now();
		const bucket = this.#refilled(key, now);
		if (bucket.tokens >= cost) {
			bucket.tokens -= cost;
			return { ok: true, remaining: Math.floor(bucket.tokens) };
		}
		const retryAfterMs = Math.ceil((cost - bucket.tokens) * this.#options.refillMs);
		return { ok: false, retryAfterMs };
	}

	/** Like take, but throws 429 rate-limited with Retry-After when the key is out of tokens. */
	consume(key: string, what: string, cost = 1): void {
		const decision = this.take(key, cost);
		if (!decision.ok) throw rateLimited(decision.retryAfterMs, what);
	}

	/**
	 * How long until the key has a token again, without taking one; undefined when it has one now.
	 * For limits that only failures pay for (wrong guesses): check first, take on failure.
	 */
	blocked(key: string): number | undefined {
		const bucket = this.#buckets.get(key);
		if (!bucket) return undefined;
		const { capacity, refillMs } = this.#options;
		const elapsed = Math.max(0, this.#options.clock.now() - bucket.at);
		const tokens = Math.min(capacity, bucket.tokens + elapsed / refillMs);
		return tokens >= 1 ? undefined : Math.ceil((1 - tokens) * refillMs);
	}

	/** Forgets a key, e.g. after a success that should not count against the next attempt. */
	reset(key: string): void {
		this.#buckets.delete(key);
	}

	/** How many keys are held (for tests of the memory bound). */
	get size(): number {
		return this.#buckets.size;
	}

	#refilled(key: string, now: number): Bucket {
		const { capacity, refillMs } = this.#options;
		let bucket = this.#buckets.get(key);
		if (!bucket) {
			this.#makeRoom(now);
			bucket = { tokens: capacity, at: now };
			this.#buckets.set(key, bucket);
			return bucket;
		}
		// A clock that went backwards refills nothing rather than taking tokens away.
		const elapsed = Math.max(0, now - bucket.at);
		bucket.tokens = Math.min(capacity, bucket.tokens + elapsed / refillMs);
		bucket.at = now;
		// Map order is insertion order: re-inserting keeps the least recently used first.
		this.#buckets.delete(key);
		this.#buckets.set(key, bucket);
		return bucket;
	}

	#makeRoom(now: number): void {
		const { capacity, refillMs, maxKeys } = this.#options;
		if (this.#buckets.size < maxKeys) return;
		// A bucket that has refilled completely holds nothing worth keeping.
		for (const [key, bucket] of this.#buckets) {
			if (bucket.tokens + (now - bucket.at) / refillMs >= capacity) this.#buckets.delete(key);
		}
		while (this.#buckets.size >= maxKeys) {
			const oldest = this.#buckets.keys().next().value;
			if (oldest === undefined) break;
			this.#buckets.delete(oldest);
		}
	}
}

/** 429 rate-limited, with Retry-After in whole seconds and `retryAfter` in the body. */
export function rateLimited(retryAfterMs: number, what: string): HttpError {
	const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
	return new HttpError(
		429,
		"rate-limited",
		`Too many ${what} attempts from here.`,
		`Wait ${seconds} second${seconds === 1 ? "" : "s"} and try again.`,
		{ retryAfter: seconds },
		{ "retry-after": String(seconds) },
	);
}
