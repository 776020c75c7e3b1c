import { expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { RateLimiter, type rateLimited } from "./rate-limit";

test("a burst up to capacity passes, then each token comes back after refillMs", async () => {
	const clock = new ManualClock();
	const limiter = new RateLimiter({ capacity: 3, refillMs: 10_000, clock });
	expect([1, 2, 3].map(() => limiter.take("a").ok)).toEqual([true, true, true]);
	expect(limiter.take("a")).toEqual({ ok: false, retryAfterMs: 10_000 });
	// Another key has its own bucket.
	expect(limiter.take("b").ok).toBe(true);
	await clock.advance(4_000);
	expect(limiter.take("a")).toEqual({ ok: false, retryAfterMs: 6_000 });
	await clock.advance(6_000);
	expect(limiter.take("a")).toEqual({ ok: true, remaining: 0 });
	expect(limiter.take("a").ok).toBe(false);
	// A long pause refills to capacity, never beyond.
	await clock.advance(1_000_000);
	expect([1, 2, 3, 4].map(() => limiter.take("a").ok)).toEqual([true, true, true, false]);
});

test("consume throws 429 rate-limited with Retry-After; reset forgets a key", () => {
	const clock = new ManualClock();
	const limiter = new RateLimiter({ capacity: 1, refillMs: 2_500, clock });
	limiter.consume("k", "sign-in");
	let thrown: unknown;
	try {
		limiter.consume("k", "sign-in");
	} catch (error) {
		thrown = error;
	}
	const error = thrown as ReturnType<typeof rateLimited>;
	expect([error.status, error.code, error.headers?.["retry-after"]]).toEqual([429, "rate-limited", "3"]);
	expect(error.details).toEqual({ retryAfter: 3 });
	expect(error.message).toBe("Too many sign-in attempts from here.");
	limiter.reset("k");
	expect(limiter.take("k").ok).toBe(true);
});

test("memory stays bounded: idle buckets go first, then the least recently used", async () => {
	const clock = new ManualClock();
	const limiter = new RateLimiter({ capacity: 2, refillMs: 1_000, clock, maxKeys: 3 });
	limiter.take("a");
	limiter.take("b");
	limiter.take("c");
	limiter.take("d");
	expect(limiter.size).toBe(3);
	// "a" was the least recently used, so it went and starts full again.
	expect(limiter.take("a")).toEqual({ ok: true, remaining: 1 });
	await clock.advance(5_000);
	limiter.take("e");
	// Everything had refilled: all idle buckets were dropped to make room.
	expect(limiter.size).toBe(1);
});

test("blocked() says how long until a token comes back, without taking one", async () => {
	const clock = new ManualClock();
	const limiter = new RateLimiter({ capacity: 2, refillMs: 1_000, clock });
	expect(limiter.blocked("a")).toBeUndefined();
	limiter.take("a");
	expect(limiter.blocked("a")).toBeUndefined();
	limiter.take("a");
	expect(limiter.blocked("a")).toBe(1_000);
	expect(limiter.blocked("a")).toBe(1_000);
	await clock.advance(400);
	expect(limiter.blocked("a")).toBe(600);
	await clock.advance(600);
	expect(limiter.blocked("a")).toBeUndefined();
});
