// Liveness on its own, over a stand-in for Bun's socket (the queue size is what a test sets): the ping schedule,
// no ping while queued, the timeout put off by a shrinking queue, and the longest silence.
import { describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { Liveness } from "./liveness";

function setup(settings = { pingMs: 15_000, timeoutMs: 120_000, maxSilenceMs: 900_000 }) {
	const clock = new ManualClock();
	const socket = {
		buffered: 0,
		pings: 0,
		ping() {
			this.pings++;
		},
		getBufferedAmount() {
			return this.buffered;
		},
	};
	let dropped = 0;
	const liveness = new Liveness(clock, settings, socket, () => dropped++);
	return { clock, socket, liveness, dropped: () => dropped };
}

describe("Liveness", () => {
	test("pings every interval from the start", async () => {
		const { clock, socket } = setup();
		await clock.advance(14_999);
		expect(socket.pings).toBe(0);
		await clock.advance(1);
		expect(socket.pings).toBe(1);
		await clock.advance(45_000);
		expect(socket.pings).toBe(4);
	});

	test("no ping while anything is queued", async () => {
		const { clock, socket, liveness } = setup();
		socket.buffered = 10;
		await clock.advance(60_000);
		expect(socket.pings).toBe(0);
		socket.buffered = 0;
		liveness.heard();
		await clock.advance(15_000);
		expect(socket.pings).toBe(1);
	});

	test("dropped after the timeout unheard; hearing anything puts it off", async () => {
		const { clock, liveness, dropped } = setup();
		await clock.advance(100_000);
		liveness.heard();
		await clock.advance(119_999);
		expect(dropped()).toBe(0);
		await clock.advance(1);
		expect(dropped()).toBe(1);
		await clock.advance(1_000_000);
		expect(dropped()).toBe(1);
	});

	test("a shrinking queue puts off the timeout, never the longest silence", async () => {
		const { clock, socket, liveness, dropped } = setup({
			pingMs: 15_000,
			timeoutMs: 120_000,
			maxSilenceMs: 300_000,
		});
		socket.buffered = 1_000_000;
		for (let t = 0; t < 9; t++) {
			await clock.advance(30_000);
			socket.buffered -= 50_000;
			liveness.drained();
		}
		// 270 s unheard, past the 120-second timeout, but the queue kept shrinking.
		expect(dropped()).toBe(0);
		await clock.advance(29_999);
		expect(dropped()).toBe(0);
		await clock.advance(1);
		expect(dropped()).toBe(1);
	});

	test("a shrink seen at a ping (without drain) counts too; a queue that never shrinks does not", async () => {
		const { clock, socket, dropped } = setup();
		socket.buffered = 500;
		await clock.advance(15_000);
		socket.buffered = 400;
		await clock.advance(15_000); // seen at 30 s
		await clock.advance(119_999);
		expect(dropped()).toBe(0);
		await clock.advance(1);
		expect(dropped()).toBe(1);
	});

	test("stop cancels everything", async () => {
		const { clock, socket, liveness, dropped } = setup();
		liveness.stop();
		await clock.advance(10_000_000);
		expect(socket.pings).toBe(0);
		expect(dropped()).toBe(0);
		expect(clock.pending).toBe(0);
	});
});
