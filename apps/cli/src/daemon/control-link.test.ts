import { afterEach, describe, expect, test } from "bun:test";
import { reconnectBackoff } from "@chopin/agent-link/backoff";
import { ManualClock } from "@chopin/agent-link/clock";
import { eventually } from "../testing/cli-process";
import { closeOpened, link, open, pairedServer } from "../testing/control-link-harness";
import { TcpProxy } from "../testing/tcp-proxy";
import type { ControlLink } from "./control-link";
import { httpReach } from "./reach";

afterEach(closeOpened);

describe("the reconnect schedule, on a ManualClock against a server that is down", () => {
	test("1, 2, 5, 10, 20, 30, 60, 60 s; a wake or a network change tries at once, without waiting", async () => {
		const { server, credential } = await pairedServer();
		const url = server.url;
		await server.close(); // down: every attempt is refused at once
		const l = link(url, credential);
		const running = l.control.run();
		const delays: number[] = [];
		for (let i = 0; i < 8; i++) {
			const waiting = await l.next("waiting");
			delays.push(waiting.delayMs);
			expect(l.control.snapshot()).toMatchObject({ state: "waiting", attempts: i + 1 });
			await l.clock.advance(waiting.delayMs);
		}
		expect(delays).toEqual([1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 60_000, 60_000]);
		// No real waiting happened: the clock moved only as far as the schedule.
		expect(l.clock.now() - Date.UTC(2026, 0, 1)).toBe(delays.reduce((a, b) => a + b, 0));

		// Waiting a minute; the machine wakes from sleep: an attempt now, the clock unmoved.
		const waiting = await l.next("waiting");
		expect(waiting.delayMs).toBe(60_000);
		const before = l.clock.now();
		l.wake.fire("woke up after 3600 s");
		expect(await l.next("attempt")).toMatchObject({ attempt: 10 });
		expect((await l.next("waiting")).delayMs).toBe(60_000);
		l.network.fire("the network interfaces changed");
		expect(await l.next("attempt")).toMatchObject({ attempt: 11 });
		expect((await l.next("waiting")).delayMs).toBe(60_000);
		expect(l.clock.now()).toBe(before);
		expect(l.control.snapshot().lastError).toContain("could not connect");

		await l.control.stop();
		await running;
		expect(l.control.snapshot().state).toBe("stopped");
	}, 20_000);
});

describe("a live server", () => {
	test("welcome resets the schedule; a 1012 close tries again at once, then from the first step", async () => {
		const { server, credential, machineId } = await pairedServer();
		const l = link(server.url, credential);
		const running = l.control.run();
		const connected = await l.next("connected");
		expect(connected.welcome.machine).toMatchObject({ id: machineId, owner: "ana" });
		expect(l.control.snapshot()).toMatchObject({ state: "connected", attempts: 0 });

		await server.restart();
		const ended = await l.next("ended");
		expect(ended.outcome).toMatchObject({ kind: "closed", code: 1012, restartingWithinMs: 10_000 });
		expect(await l.next("waiting")).toMatchObject({ delayMs: 0, why: "the server is restarting" });
		// The immediate attempt raced the new process; whatever it met, the next wait is the first step.
		const attempt = await l.next("attempt");
		expect(attempt.attempt).toBe(1);
		const after = await Promise.race([l.next("connected"), l.next("waiting")]);
		if (after.type === "waiting") {
			expect(after.delayMs).toBe(1_000);
			await l.clock.advance(1_000);
			await l.next("connected");
		}
		await eventually("the machine online again", () => server.context.machines.control.isOnline(machineId));
		await l.control.stop();
		await running;
	}, 20_000);

	test("a silent channel (no ping, no frame) is dropped after the silence limit and reconnected", async () => {
		// The server's pings run on its own ManualClock, which nobody advances: it never pings.
		const { server, credential, machineId } = await pairedServer({ clock: new ManualClock() });
		const l = link(server.url, credential, { silenceMs: 37_500 });
		const running = l.control.run();
		await l.next("connected");
		await l.clock.advance(37_499);
		expect(l.control.snapshot().state).toBe("connected");
		await l.clock.advance(1);
		expect((await l.next("ended")).outcome).toMatchObject({ kind: "closed", silent: true, welcomed: true });
		expect((await l.next("waiting")).delayMs).toBe(1_000);
		await l.clock.advance(1_000);
		await l.next("connected");
		await eventually("the new socket online", () => server.context.machines.control.isOnline(machineId));
		await l.control.stop();
		await running;
	}, 20_000);

	test("through a stalled network: a wake probe drops the dead socket, and the pending attempt completes on restore", async () => {
		const { server, credential, machineId } = await pairedServer();
		const proxy = await TcpProxy.start({ host: "127.0.0.1", port: server.port });
		open.push(proxy);
		const l = link(proxy.url, credential, { probeMs: 5_000 });
		const running = l.control.run();
		await l.next("connected");

		// A live socket answers the probe: nothing happens.
		await l.clock.advance(1);
		const heard = l.control.snapshot().lastContact ?? 0;
		l.network.fire("the network interfaces changed");
		await eventually("the pong", () => (l.control.snapshot().lastContact ?? 0) > heard);
		await l.clock.advance(5_000);
		expect(l.control.snapshot().state).toBe("connected");

		proxy.blackhole();
		l.wake.fire("woke up after 600 s");
		await l.clock.advance(5_000);
		expect((await l.next("ended")).outcome).toMatchObject({ kind: "ended", why: "probe" });
		expect((await l.next("waiting")).delayMs).toBe(0);
		const accepted = proxy.accepted;
		await l.next("attempt");
		await eventually("the new attempt reaching the stalled proxy", () => proxy.accepted > accepted);
		expect(l.control.snapshot().state).toBe("connecting");
		proxy.restore();
		await l.next("connected");
		await eventually("online again", () => server.context.machines.control.isOnline(machineId));
		await l.control.stop();
		await running;
	}, 20_000);
});

describe("a server shedding a reconnect storm (issue 19)", () => {
	test("503 server-busy with Retry-After: tried again after what the server said, not the schedule's next step", async () => {
		// Every hello is shed until the test lets them in (MACHINE_HELLOS_IN_FLIGHT 0, then 400).
		const { server, credential, machineId } = await pairedServer({ env: { MACHINE_HELLOS_IN_FLIGHT: "0" } });
		// A machine that has been failing for a while: its schedule is at the 60 s steps.
		const backoff = reconnectBackoff({ random: () => 1 });
		for (let i = 0; i < 6; i++) backoff.next();
		const l = link(server.url, credential, { backoff });
		const running = l.control.run();
		for (let refusal = 0; refusal < 2; refusal++) {
			const ended = await l.next("ended");
			expect(ended.outcome).toMatchObject({ kind: "refused", status: 503, body: { code: "server-busy" } });
			const retryAfter = ended.outcome.kind === "refused" ? (ended.outcome.body?.retryAfter ?? 0) : 0;
			expect(retryAfter >= 1 && retryAfter <= 3).toBe(true);
			// Before the fix: the longer of the two, 60 s, and a minute more for each further refusal.
			expect(await l.next("waiting")).toMatchObject({ delayMs: retryAfter * 1_000 });
			if (refusal === 1) server.context.config.machines.hellosInFlight = 400;
			await l.clock.advance(retryAfter * 1_000);
			await l.next("attempt");
		}
		await l.next("connected");
		await eventually("online", () => server.context.machines.control.isOnline(machineId));
		// The refusals spent no step: the schedule was where the failures had left it until the welcome reset it.
		expect(backoff.attempts).toBe(0);
		await l.control.stop();
		await running;
	}, 20_000);
});

describe("back within a couple of seconds of the network or the server returning (issue 16: reattach)", () => {
	/** Moves the link's clock in small steps, letting real sockets answer between them, until `done`; the simulated ms it took. */
	async function advanceUntil(clock: ManualClock, done: () => boolean, limitMs: number): Promise<number> {
		let spent = 0;
		while (!done()) {
			if (spent >= limitMs) throw new Error(`not done within ${limitMs} simulated ms`);
			await clock.advance(50);
			spent += 50;
			await Bun.sleep(2);
		}
		return spent;
	}

	/** A paired server behind a loopback TCP proxy the test controls, and a link through it with the HTTP reach. */
	async function throughProxy(overrides: Partial<ConstructorParameters<typeof ControlLink>[0]> = {}) {
		const { server, credential, machineId } = await pairedServer({ clock: new ManualClock() });
		const proxy = await TcpProxy.start({ host: "127.0.0.1", port: server.port });
		open.push(proxy);
		let l: ReturnType<typeof link>;
		const reach = (signal: AbortSignal) =>
			httpReach({ server: proxy.url, fetch, clock: l.clock, client: "chopin/0.1.0 (linux-x64; source)" })(
				signal,
			);
		l = link(proxy.url, credential, { reach, random: () => 0.5, ...overrides });
		return { server, machineId, proxy, l };
	}

	test("a partition that drops bytes for minutes: online again within 2 s of the network's return", async () => {
		const { server, machineId, proxy, l } = await throughProxy({ silenceMs: 37_500 });
		const running = l.control.run();
		await l.next("connected");

		proxy.drop();
		// Three minutes of a network that eats every byte: the channel goes silent, attempts go nowhere.
		await advanceUntil(l.clock, () => false, 180_000).catch(() => {});
		expect(l.control.snapshot().state).not.toBe("connected");
		// (The server's clock is not moved: it has not noticed yet, as a server whose timeout is longer would not.)
		const before = server.context.machines.control.connection(machineId);

		proxy.restore();
		const took = await advanceUntil(l.clock, () => l.control.snapshot().state === "connected", 20_000);
		expect(took).toBeLessThanOrEqual(2_000);
		await eventually("a new connection online", () => {
			const now = server.context.machines.control.connection(machineId);
			return now !== before && now?.state === "ready";
		});
		await l.control.stop();
		await running;
	}, 60_000);

	test("a short drop: an attempt sent into it, the network back before any reach saw it down, is given up at the first answer", async () => {
		const { proxy, l } = await throughProxy({ silenceMs: 37_500 });
		const running = l.control.run();
		await l.next("connected");

		proxy.drop();
		// The channel goes silent and is given up; the next attempt's bytes go into the dropped network.
		await advanceUntil(l.clock, () => l.control.snapshot().state === "connecting", 120_000);
		// Back before the reach loop's first reach: nothing ever saw the network down, yet the attempt is lost.
		proxy.restore();
		const took = await advanceUntil(l.clock, () => l.control.snapshot().state === "connected", 20_000);
		// The first reach answers 1.5 s in; without giving the attempt up it would wait out its 10 s handshake.
		expect(took).toBeLessThanOrEqual(2_000);
		await l.control.stop();
		await running;
	}, 60_000);

	test("refused 502 by a proxy while the server restarts, past the 60 s steps: back within 2 s of the first reach that finds it up (issue 19)", async () => {
		const { server, machineId, l } = await throughProxy();
		const running = l.control.run();
		await l.next("connected");
		await server.restart({
			whileDown: async (port) => {
				// The proxy in front answers 502 to the upgrade and to the reach alike.
				const proxy = Bun.serve({
					port,
					hostname: "127.0.0.1",
					fetch: () => new Response("bad gateway", { status: 502 }),
				});
				// Refused with 502 until the schedule is at its 60 s steps (1, 2, 5, 10, 20, 30 s before them).
				let delayMs = 0;
				while (delayMs < 60_000) {
					const ended = await l.next("ended");
					if (ended.outcome.kind === "refused") expect(ended.outcome.status).toBe(502);
					const waiting = await l.next("waiting");
					delayMs = waiting.delayMs;
					const at = l.events.indexOf(waiting);
					await advanceUntil(
						l.clock,
						() => l.events.some((e, i) => i > at && e.type === "attempt"),
						delayMs + 5_000,
					);
				}
				expect((await l.next("ended")).outcome).toMatchObject({ kind: "refused", status: 502 });
				expect((await l.next("waiting")).delayMs).toBe(60_000);
				// A reach or two sees the 502 (down) while the link waits its minute.
				await advanceUntil(l.clock, () => false, 3_000).catch(() => {});
				await proxy.stop(true);
			},
		});
		// Before the fix a refusal left it to the schedule alone: the rest of that minute.
		const took = await advanceUntil(l.clock, () => l.control.snapshot().state === "connected", 60_000);
		expect(took).toBeLessThanOrEqual(2_000);
		await eventually("online again", () => server.context.machines.control.isOnline(machineId));
		await l.control.stop();
		await running;
	}, 60_000);

	test("an attempt already upgraded is not given up when a reach that timed out is followed by one that answers (issue 19)", async () => {
		// A server too busy to answer a reach within its timeout, then answering: it upgraded the attempt and is
		// working on its hello (this one never welcomes, so the attempt stays pending; its reaches say what the test sets).
		let pingStatus = 502;
		const pings: number[] = [];
		let upgraded = false;
		const busy = Bun.serve({
			port: 0,
			hostname: "127.0.0.1",
			fetch: (req, srv) => {
				if (new URL(req.url).pathname === "/api/connector/ping") {
					pings.push(pingStatus);
					return new Response(null, { status: pingStatus });
				}
				return srv.upgrade(req, { headers: { "Sec-WebSocket-Protocol": "chopin.machine.v1" } })
					? undefined
					: new Response("no", { status: 400 });
			},
			websocket: {
				open() {
					upgraded = true;
				},
				message() {},
			},
		});
		open.push({ close: () => busy.stop(true) });
		const port = busy.port ?? 0;
		const url = `http://127.0.0.1:${port}`;
		// The socket goes through a proxy that then holds its bytes (a busy server answers no ping at once either);
		// the reaches go straight to the server.
		const proxy = await TcpProxy.start({ host: "127.0.0.1", port });
		open.push(proxy);
		let l: ReturnType<typeof link>;
		const reach = (signal: AbortSignal) =>
			httpReach({ server: url, fetch, clock: l.clock, client: "chopin/0.1.0 (linux-x64; source)" })(signal);
		l = link(proxy.url, `chopin_m_${"A".repeat(43)}`, { reach, random: () => 0.5 });
		const running = l.control.run();
		await l.next("attempt");
		await eventually(
			"the attempt upgraded",
			() => upgraded && l.control.snapshot().lastContact !== undefined,
		);
		proxy.blackhole();
		// A reach finds the server down after the attempt started (as one that timed out does), the next one up.
		await advanceUntil(l.clock, () => pings.length >= 1, 5_000);
		pingStatus = 204;
		await advanceUntil(l.clock, () => pings.length >= 2, 5_000);
		await advanceUntil(l.clock, () => false, 500).catch(() => {});
		// Before the fix the upgraded attempt was dropped here (ended: probe) and the machine started over.
		expect(l.events.filter((e) => e.type === "ended")).toEqual([]);
		expect(l.control.snapshot().state).toBe("connecting");
		proxy.restore();
		await l.control.stop();
		await running;
	}, 30_000);

	test("a server down for longer than the schedule's first steps: back within 2 s of it listening, not after the next step", async () => {
		const { server, machineId, proxy, l } = await throughProxy();
		const running = l.control.run();
		await l.next("connected");
		// The server goes away (every connection reset, new ones refused) for 25 s, past the 1, 2, 5 and 10 s steps.
		proxy.cut();
		proxy.refuse();
		await advanceUntil(l.clock, () => false, 25_000).catch(() => {});
		proxy.restore();
		const took = await advanceUntil(l.clock, () => l.control.snapshot().state === "connected", 30_000);
		expect(took).toBeLessThanOrEqual(2_000);
		await eventually("online again", () => server.context.machines.control.isOnline(machineId));
		await l.control.stop();
		await running;
	}, 60_000);
});
