import { describe, expect, test } from "bun:test";
import { ManualClock, systemClock } from "./clock";

describe("ManualClock", () => {
	test("fires timers in time order as time advances", async () => {
		const clock = new ManualClock(0);
		const fired: string[] = [];
		clock.setTimeout(() => fired.push("b"), 20);
		clock.setTimeout(() => fired.push("a"), 10);
		await clock.advance(15);
		expect(fired).toEqual(["a"]);
		expect(clock.now()).toBe(15);
		await clock.advance(5);
		expect(fired).toEqual(["a", "b"]);
	});

	test("a sleep that sets the next sleep is followed within one advance", async () => {
		const clock = new ManualClock(0);
		const wakes: number[] = [];
		(async () => {
			for (let i = 0; i < 3; i++) {
				await clock.sleep(1_000);
				wakes.push(clock.now());
			}
		})();
		await clock.advance(3_000);
		expect(wakes).toEqual([1_000, 2_000, 3_000]);
	});

	test("cancelled timers never fire and an aborted sleep rejects", async () => {
		const clock = new ManualClock(0);
		let fired = false;
		clock
			.setTimeout(() => {
				fired = true;
			}, 5)
			.cancel();
		const controller = new AbortController();
		const sleeping = clock.sleep(10, controller.signal);
		controller.abort(new Error("stop"));
		await expect(sleeping).rejects.toThrow("stop");
		await clock.advance(100);
		expect(fired).toBe(false);
		expect(clock.pending).toBe(0);
	});
});

test("systemClock sleeps for real", async () => {
	const clock = systemClock();
	const start = clock.now();
	await clock.sleep(5);
	expect(clock.now() - start).toBeGreaterThanOrEqual(4);
});
