import { expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { Liveness } from "./liveness";

function probe(options: { pingMs?: number; timeoutMs?: number; maxSilenceMs?: number } = {}) {
	const clock = new ManualClock();
	const state = { pings: 0, queued: 0, dead: 0 };
	const liveness = new Liveness({
		clock,
		pingMs: options.pingMs ?? 15_000,
		timeoutMs: options.timeoutMs ?? 120_000,
		maxSilenceMs: options.maxSilenceMs ?? 900_000,
		ping: () => {
			state.pings += 1;
		},
		queued: () => state.queued,
		onDead: () => {
			state.dead += 1;
		},
	});
	liveness.start();
	return { clock, state, liveness };
}

test("a ping every interval from the start; dropped exactly at the timeout when nothing is heard", async () => {
	const { clock, state } = probe();
	await clock.advance(14_999);
	expect(state.pings).toBe(0);
	await clock.advance(1);
	expect(state.pings).toBe(1);
	await clock.advance(120_000 - 15_001);
	expect(state.dead).toBe(0);
	await clock.advance(1);
	expect(state.dead).toBe(1);
	await clock.advance(1_000_000);
	expect(state.dead).toBe(1);
});

test("anything heard puts the drop off by a whole timeout", async () => {
	const { clock, state, liveness } = probe();
	await clock.advance(100_000);
	liveness.heard();
	await clock.advance(119_999);
	expect(state.dead).toBe(0);
	await clock.advance(1);
	expect(state.dead).toBe(1);
});

test("no ping while frames are queued; a shrinking queue postpones the drop, up to the longest silence", async () => {
	const { clock, state } = probe({ maxSilenceMs: 300_000 });
	state.queued = 1_000_000;
	await clock.advance(15_000);
	expect(state.pings).toBe(0);
	// The queue drains a little on every tick, but the client itself says nothing.
	for (let t = 15_000; t < 300_000; t += 15_000) {
		state.queued -= 1_000;
		await clock.advance(15_000);
		if (state.dead) break;
	}
	expect(state.pings).toBe(0);
	expect(state.dead).toBe(1);
	expect(clock.now() - Date.UTC(2026, 0, 1)).toBe(300_000);
});

test("stop() ends the timers", async () => {
	const { clock, state, liveness } = probe();
	liveness.stop();
	await clock.advance(1_000_000);
	expect(state).toEqual({ pings: 0, queued: 0, dead: 0 });
	expect(clock.pending).toBe(0);
});
