import { describe, expect, test } from "bun:test";
import type { NetworkInterfaceInfo } from "node:os";
import { type Clock, ManualClock } from "@chopin/agent-link/clock";
import { NetworkWatcher, WakeDetector } from "./triggers";

/** A ManualClock whose wall time can jump without firing timers, as after a sleep. */
function sleepyClock(): { clock: Clock; manual: ManualClock; sleep(ms: number): void } {
	const manual = new ManualClock();
	let offset = 0;
	return {
		manual,
		clock: {
			now: () => manual.now() + offset,
			setTimeout: (fn, ms) => manual.setTimeout(fn, ms),
			sleep: (ms, signal) => manual.sleep(ms, signal),
		},
		sleep: (ms) => {
			offset += ms;
		},
	};
}

describe("WakeDetector", () => {
	test("fires when wall time moved far more than its tick, not on ordinary ticks", async () => {
		const { clock, manual, sleep } = sleepyClock();
		const detector = new WakeDetector(clock, 5_000, 15_000);
		const fired: string[] = [];
		const unsubscribe = detector.subscribe((why) => fired.push(why));
		await manual.advance(5_000);
		await manual.advance(5_000);
		expect(fired).toEqual([]);
		sleep(60_000); // the laptop slept a minute: no timer ran meanwhile
		await manual.advance(5_000);
		expect(fired).toEqual(["woke up after 65 s"]);
		await manual.advance(5_000);
		expect(fired).toHaveLength(1);
		unsubscribe();
		expect(manual.pending).toBe(0);
	});
});

describe("NetworkWatcher", () => {
	test("fires when an interface's address changes; loopback and an unchanged list do not", async () => {
		const manual = new ManualClock();
		const address = (addr: string, internal = false): NetworkInterfaceInfo => ({
			address: addr,
			netmask: "255.255.255.0",
			family: "IPv4",
			mac: "00:00:00:00:00:00",
			internal,
			cidr: null,
		});
		let list: NodeJS.Dict<NetworkInterfaceInfo[]> = {
			lo: [address("127.0.0.1", true)],
			eth0: [address("10.0.0.5")],
		};
		const watcher = new NetworkWatcher(manual, () => list, 3_000);
		const fired: string[] = [];
		const unsubscribe = watcher.subscribe((why) => fired.push(why));
		await manual.advance(3_000);
		expect(fired).toEqual([]);
		list = { ...list, lo: [address("127.0.0.2", true)] };
		await manual.advance(3_000);
		expect(fired).toEqual([]);
		list = { lo: list.lo, wlan0: [address("192.168.1.7")] }; // left the wired network, joined Wi-Fi
		await manual.advance(3_000);
		expect(fired).toEqual(["the network interfaces changed"]);
		await manual.advance(3_000);
		expect(fired).toHaveLength(1);
		unsubscribe();
		expect(manual.pending).toBe(0);
	});
});
