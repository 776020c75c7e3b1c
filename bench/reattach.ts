/**
 * Reattach after a stalled network: a real `chopin run` daemon reaches a real server through a
 * loopback TCP proxy that the bench blackholes (stops forwarding without closing anything) for a
 * while and then restores. Prints, per round and as a median, the time from the restore to the
 * machine being online again as the server sees it (a new control connection that said hello).
 * Target: under 2 s median. Not a test: it prints its figures.
 *
 * Timings are scaled down so a round takes seconds: the server pings every PING_MS (1 s) and the
 * daemon drops a channel silent for 2.5 pings (CHOPIN_CONTROL_SILENCE_MS), exactly the default
 * ratio (15 s and 37.5 s). The restore-to-online time does not depend on that scale: it depends
 * on whether an attempt is pending in the stalled network when it comes back.
 *
 *   bun bench/reattach.ts [rounds, default 7] [stall seconds, comma-separated, default 4,5,6,8,10,12,15,20,25]
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

const ROUNDS = Number(process.argv[2] ?? 7);
const PING_MS = 1_000;
const SILENCE_MS = 2_500;
/** How long each round's network stays stalled: all longer than the silence limit plus the first retry. */
const STALLS_MS = (process.argv[3] ?? "4,5,6,8,10,12,15,20,25").split(",").map((s) => Number(s) * 1_000);

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
	home = await makeCliHome({ CHOPIN_CONTROL_SILENCE_MS: String(SILENCE_MS), CHOPIN_LOG_LEVEL: "info" });
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

	const figures: { stallMs: number; ms: number; attemptsWhileStalled: number }[] = [];
	for (let round = 0; round < ROUNDS; round++) {
		const stallMs = STALLS_MS[round % STALLS_MS.length]!;
		const before = control.connection(id);
		const accepted = proxy.accepted;
		proxy.blackhole();
		await Bun.sleep(stallMs);
		const attemptsWhileStalled = proxy.accepted - accepted;
		const restoredAt = performance.now();
		proxy.restore();
		await until(
			() => {
				const now = control.connection(id);
				return now !== undefined && now !== before && now.state === "ready";
			},
			120_000,
			`round ${round + 1}: back online`,
		);
		const ms = performance.now() - restoredAt;
		figures.push({ stallMs, ms, attemptsWhileStalled });
		await untilAsync(daemonConnected, 20_000, "the daemon's welcome");
		console.log(
			`round ${round + 1}: stalled ${stallMs / 1000} s, ${attemptsWhileStalled} attempt(s) pending or made meanwhile; online ${ms.toFixed(0)} ms after the restore`,
		);
	}
	const sorted = figures.map((f) => f.ms).sort((a, b) => a - b);
	const median = sorted[Math.floor(sorted.length / 2)]!;
	console.log(
		`reattach: median ${median.toFixed(0)} ms, min ${sorted[0]!.toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms over ${figures.length} rounds (target < 2000 ms median): ${median < 2_000 ? "met" : "missed"}`,
	);
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
