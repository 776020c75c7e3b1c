import { expect, test } from "bun:test";
import { Backoff, reconnectBackoff, restartBackoff } from "./backoff";

test("the reconnect schedule is 1, 2, 5, 10, 20, 30 s, then every minute", () => {
	const backoff = reconnectBackoff({ jitter: 0 });
	const delays = Array.from({ length: 9 }, () => backoff.next());
	expect(delays).toEqual([1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 60_000, 60_000, 60_000]);
	backoff.reset();
	expect(backoff.next()).toBe(1_000);
});

test("a cap shortens the schedule's long steps and keeps the short ones (CHOPIN_CONTROL_RETRY_MAX_MS)", () => {
	const backoff = reconnectBackoff({ jitter: 0, maxMs: 6_000 });
	expect(Array.from({ length: 8 }, () => backoff.next())).toEqual([
		1_000, 2_000, 5_000, 6_000, 6_000, 6_000, 6_000, 6_000,
	]);
});

test("jitter keeps delays within the fraction asked for", () => {
	const low = reconnectBackoff({ random: () => 0 });
	const high = reconnectBackoff({ random: () => 0.999999 });
	expect(low.next()).toBe(800);
	expect(high.next()).toBe(1_000);
});

test("the restart backoff doubles from 1 s to at most 5 minutes", () => {
	const backoff = restartBackoff({ jitter: 0 });
	const delays = Array.from({ length: 11 }, () => backoff.next());
	expect(delays).toEqual([
		1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000,
	]);
	const full = restartBackoff({ random: () => 0.5 });
	expect(full.next()).toBe(500);
	expect(full.attempts).toBe(1);
});

test("a schedule needs a delay", () => {
	expect(() => Backoff.schedule([])).toThrow();
});
