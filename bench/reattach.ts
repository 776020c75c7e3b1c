/**
 * Reattach after a partition: a real `chopin run` daemon reaches a real server through a loopback TCP proxy that the
 * bench breaks for a while and then restores, in two ways: **hold** (the proxy stops forwarding and keeps every byte,
 * delivering them on restore, like a stalled network) and **drop** (it throws every byte away and never closes
 * anything, like a middlebox that eats packets: what was sent meanwhile is lost for good). Prints, per round and as a
 * median per mode, the time from the restore to the machine being online again as the server sees it (a new control
 * connection that said hello). Target: under 2 s, in both modes, whatever the outage.
 *
 * Timings the server and daemon use to notice a dead link are scaled down so a round takes its outage and little
 * more: the server pings every PING_MS (1 s) and the daemon drops a channel silent for 2.5 pings
 * (CHOPIN_CONTROL_SILENCE_MS), the default ratio (15 s and 37.5 s). The restore-to-online time does not depend on that
 * scale: it depends on the daemon noticing that the server answers again (its reach, every 1 to 2 s) and on an attempt
 * left in a dropped network being given up.
 *
 * The daemon's reconnect schedule (1, 2, 5, 10, 20, 30 s, then every 60 s) reaches its 60 s steps after 68 s of
 * failures. The third parameter caps its steps (the daemon's CHOPIN_CONTROL_RETRY_MAX_MS) so a short outage reaches
 * its last step: with a cap of 6 s, a 25 s outage does (1 + 2 + 5 + 6 s), and a round takes half a minute instead of
 * minutes. The figures say which cap they ran with; the default is the real schedule.
 *
 *   bun bench/reattach.ts [rounds per mode, default 4] [outages in seconds, comma-separated, default 5,25,65,130]
 *     [the schedule's longest step in seconds, default 60]
 *   (600 for a ten-minute outage: `bun bench/reattach.ts 1 600`; a quick run past the last step: `bun bench/reattach.ts 2 5,25 6`)
 */
import { rmSync } from "node:fs";
import { ipcRequest } from "../apps/cli/src/local/ipc";
import { Secrets } from "../apps/cli/src/local/secrets";
import { saveCredential } from "../apps/cli/src/machine/credential";
import { saveMachineConfig } from "../apps/cli/src/machine/machine-config";
import { spawnCli } from "../apps/cli/src/testing/cli-process";
import { type CliHome, makeCliHome } from "../apps/cli/src/testing/machine-server";
import { TcpProxy } from "../apps/cli/src/testing/tcp-proxy";
import { LOCAL_ENV, pairLocally } from "../apps/server/src/testing/machines";
import { startTestServer } from "../apps/server/src/testing/server";
import { signInLocally } from "../apps/server/src/testing/sign-in";
import { systemClock } from "../packages/agent-link/src/clock";

const ROUNDS = Number(process.argv[2] ?? 4);
const PING_MS = 1_000;
const SILENCE_MS = 2_500;
/** How long each round's network stays broken: all longer than the silence limit, some past the schedule's 60 s steps. */
const STALLS_MS = (process.argv[3] ?? "5,25,65,130").split(",").map((s) => Number(s) * 1_000);
const MODES = ["hold", "drop"] as const;
const RETRY_MAX_MS = Number(process.argv[4] ?? 60) * 1_000;

const server = await startTestServer({
	env: {
		...LOCAL_ENV,
		AGENT_CONNECTION_PING_MS: String(PING_MS),
		AGENT_CONNECTION_TIMEOUT_MS: String(3 * PING_MS),
		LOG_LEVEL: "warn",
	},
});
const proxy = await TcpProxy.start({ host: "127.0.0.1", port: server.port });
let home: CliHome | undefined;
let daemon: ReturnType<typeof spawnCli> | undefined;
try {
	const target = { fetch: (req: Request) => server.fetch(req), publicUrl: server.context.config.publicUrl };
	const { jar } = await signInLocally(target, "ana");
	const paired = await pairLocally(target, jar);
	home = await makeCliHome({
		CHOPIN_CONTROL_SILENCE_MS: String(SILENCE_MS),
		CHOPIN_CONTROL_RETRY_MAX_MS: String(RETRY_MAX_MS),
		CHOPIN_LOG_LEVEL: "info",
	});
	console.log(`the daemon's reconnect schedule: steps up to ${RETRY_MAX_MS / 1000} s (the real one: 60 s)`);
	const deps = { paths: home.paths, platform: "linux" as const, secrets: new Secrets() };
	// The daemon knows the server only as the proxy.
	saveCredential(deps, {
		server: proxy.url,
		token: paired.credential,
		machineId: paired.machineId,
		createdAt: new Date().toISOString(),
	});
	saveMachineConfig(home.paths, {
		version: 1,
		server: proxy.url,
		label: "bench",
		checkouts: [{ path: home.checkout, repository: "octo/score", origin: "git@github.com:octo/score.git" }],
	});
	daemon = spawnCli(["run"], home.env);
	const control = server.context.machines.control;
	const id = paired.machineId;
	// The daemon's own view: a round starts only once it has the welcome too (else it would be
	// stalled holding an unwelcomed socket, and its schedule would never start over).
	const ipc = { socket: home.paths.socket, clock: systemClock() };
	const daemonConnected = async () =>
		(await ipcRequest(ipc, { type: "status" }).catch(() => undefined))?.status.connection.state ===
		"connected";
	await until(() => control.isOnline(id), 20_000, "the first connection");
	await untilAsync(daemonConnected, 20_000, "the daemon's welcome");

	for (const mode of MODES) {
		const figures: number[] = [];
		for (let round = 0; round < ROUNDS; round++) {
			const stallMs = STALLS_MS[round % STALLS_MS.length]!;
			const before = control.connection(id);
			const accepted = proxy.accepted;
			if (mode === "hold") proxy.blackhole();
			else proxy.drop();
			await Bun.sleep(stallMs);
			const attemptsWhileBroken = proxy.accepted - accepted;
			const restoredAt = performance.now();
			proxy.restore();
			await until(
				() => {
					const now = control.connection(id);
					return now !== undefined && now !== before && now.state === "ready";
				},
				120_000,
				`${mode} round ${round + 1}: back online`,
			);
			const ms = performance.now() - restoredAt;
			figures.push(ms);
			await untilAsync(daemonConnected, 20_000, "the daemon's welcome");
			console.log(
				`${mode} ${round + 1}: broken ${stallMs / 1000} s, ${attemptsWhileBroken} connection(s) made meanwhile; online ${ms.toFixed(0)} ms after the restore`,
			);
		}
		const sorted = [...figures].sort((a, b) => a - b);
		const median = sorted[Math.floor(sorted.length / 2)]!;
		console.log(
			`${mode}: median ${median.toFixed(0)} ms, min ${sorted[0]!.toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms over ${figures.length} rounds (target < 2000 ms): ${sorted.at(-1)! < 2_000 ? "met in every round" : median < 2_000 ? "met at the median" : "missed"}`,
		);
	}
} finally {
	daemon?.kill("SIGTERM");
	await daemon?.exited;
	await proxy.close();
	await server.close();
	if (home) rmSync(home.root, { recursive: true, force: true });
}

async function untilAsync(check: () => Promise<boolean>, limitMs: number, what: string): Promise<void> {
	const deadline = performance.now() + limitMs;
	while (!(await check())) {
		if (performance.now() > deadline) throw new Error(`gave up waiting for ${what}`);
		await Bun.sleep(5);
	}
}

async function until(check: () => boolean, limitMs: number, what: string): Promise<void> {
	const deadline = performance.now() + limitMs;
	while (!check()) {
		if (performance.now() > deadline) throw new Error(`gave up waiting for ${what}`);
		await Bun.sleep(2);
	}
}
