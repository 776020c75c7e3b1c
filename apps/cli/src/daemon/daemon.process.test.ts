import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { systemClock } from "@chopin/agent-link/clock";
import { runnableKinds } from "../../../server/src/store/testing";
import { ipcRequest } from "../local/ipc";
import { lockCheckout } from "../local/lock";
import { loadMachineConfig, saveMachineConfig } from "../machine/machine-config";
import { upgradeCommand } from "../program/version";
import { statusReportRequest } from "../status/status-by-daemon";
import { statusReportSchema } from "../status/status-report-schema";
import { eventually, killCliProcesses, readLog, runCliProcess, spawnCli } from "../testing/cli-process";
import {
	type CliHome,
	type MachineServer,
	makeCliHome,
	pairHome,
	startMachineServer,
} from "../testing/machine-server";

const servers: MachineServer[] = [];
const homes: CliHome[] = [];
afterEach(async () => {
	await killCliProcesses();
	for (const s of servers.splice(0)) await s.server.close();
	for (const h of homes.splice(0)) rmSync(h.root, { recursive: true, force: true });
});

async function serve(options: Parameters<typeof startMachineServer>[0] = {}): Promise<MachineServer> {
	const machines = await startMachineServer(options);
	servers.push(machines);
	return machines;
}

async function home(env: Record<string, string> = {}): Promise<CliHome> {
	const h = await makeCliHome(env);
	homes.push(h);
	return h;
}

const CONNECTED = /Connected to \S+ as ana's machine "[^"]+"\./;

/** Log lines with this message, in order. */
const logged = (h: CliHome, msg: string) => readLog(h.paths.logFile).filter((l) => l.msg === msg);

for (const kind of runnableKinds()) {
	describe(`the daemon through a server restart [${kind}]`, () => {
		test("it reconnects at once after the 1012 close, without pairing again", async () => {
			const machines = await serve({ store: kind });
			const h = await home();
			const { machineId } = await pairHome(machines, h);
			const daemon = spawnCli(["run"], h.env);
			await daemon.waitFor(CONNECTED);
			await eventually("the machine online", () => machines.online(machineId));
			const pairings = machines.requests("/api/connector/pairings").length;

			await machines.server.restart();
			await eventually("the machine online after the restart", () => machines.online(machineId));

			// The log tells the story: closed with 1012, reconnecting at once (no schedule wait), connected.
			const closedAt = (log: Record<string, unknown>[]) =>
				log.findIndex(
					(l) => l.msg === "control channel down" && (l.outcome as { code?: number }).code === 1012,
				);
			const log = await eventually("the daemon's log of the reconnect", () => {
				const lines = readLog(h.paths.logFile);
				const at = closedAt(lines);
				return at >= 0 && lines.slice(at).some((l) => l.msg === "connected") && lines;
			});
			const down = closedAt(log);
			expect(log[down + 1]).toMatchObject({
				msg: "reconnecting at once",
				delayMs: 0,
				why: "the server is restarting",
			});
			expect(log[down + 2]).toMatchObject({ msg: "connecting to the server" });
			expect(log.slice(down).some((l) => l.msg === "connected")).toBe(true);
			// No new pairing, the same credential.
			expect(machines.requests("/api/connector/pairings")).toHaveLength(pairings);
			expect(daemon.stderr()).not.toContain("error:");

			daemon.kill("SIGTERM");
			expect(await daemon.exited).toBe(0);
			expect(daemon.stderr()).toContain("Stopped: the connection was closed and the locks released.");
			await eventually("the machine offline", () => !machines.online(machineId));
		}, 60_000);
	});
}

describe("the daemon's final errors", () => {
	test("revoked from the Machines page while running: exit 10 with the next step, and no retry", async () => {
		const machines = await serve();
		const h = await home();
		const { machineId } = await pairHome(machines, h);
		const daemon = spawnCli(["run"], h.env);
		await daemon.waitFor(CONNECTED);
		const attempts = machines.requests("/api/v1/machine").length;
		expect((await machines.revoke(machineId)).status).toBe(204);
		expect(await daemon.exited).toBe(10);
		expect(daemon.stderr()).toContain(
			`error: ${machines.server.url} no longer accepts this machine's credential: it was disconnected (revoked).\nhint: Run \`chopin connect\` to pair this machine again.\n`,
		);
		// It never tried again: the server saw no connection attempt after the revocation.
		expect(machines.requests("/api/v1/machine")).toHaveLength(attempts);
		expect(logged(h, "reconnecting later")).toHaveLength(0);
		expect(logged(h, "reconnecting at once")).toHaveLength(0);
		// Its locks went with it.
		expect(existsSync(h.paths.socket)).toBe(false);
	}, 30_000);

	test("a server that needs a newer chopin refuses the channel: exit 12 with the exact upgrade command", async () => {
		// The server's own test client (0.2.0) may pair; this CLI (0.1.0) may not connect.
		const machines = await serve({ env: { MIN_CLI_VERSION: "0.1.5" } });
		const h = await home();
		await pairHome(machines, h);
		const result = await runCliProcess(["run"], h.env);
		expect(result.code).toBe(12);
		const command = upgradeCommand("source", {
			execPath: process.execPath,
			main: join(import.meta.dir, "..", "main.ts"),
			platform: "linux",
			home: h.env.HOME!,
			server: machines.server.url,
			version: "0.1.5",
		});
		expect(result.stderr).toContain(
			`error: ${machines.server.url} needs chopin 0.1.5 or newer, and this is chopin 0.1.0: upgrade with \`${command}\`.\nhint: Run \`${command}\`, then start chopin again.\n`,
		);
		expect(machines.requests("/api/v1/machine")).toHaveLength(1);
	}, 30_000);
});

describe("one daemon, many checkouts", () => {
	test("a second connect hands its checkout to the running daemon; status --json lists both", async () => {
		const machines = await serve();
		const h = await home();
		const { machineId } = await pairHome(machines, h);
		const daemon = spawnCli(["run"], h.env);
		await daemon.waitFor(CONNECTED);
		const other = await h.makeCheckout("other", "octo/other");

		const joined = await runCliProcess(["connect", other], h.env);
		expect(joined.code).toBe(0);
		expect(joined.stderr).toContain(
			`The running chopin daemon (pid ${daemon.pid}) now serves ${other} (octo/other).`,
		);
		expect(joined.stderr).not.toContain("Planner settings");

		const status = await runCliProcess(["status", "--json"], h.env);
		expect(status.code).toBe(0);
		expect(status.stderr).toBe("");
		const report = statusReportSchema.parse(JSON.parse(status.stdout));
		expect(report.checkouts.map((c) => [c.repository, c.path, c.served, c.state])).toEqual([
			["octo/score", h.checkout, true, "connected"],
			["octo/other", other, true, "connected"],
		]);
		expect(report.account).toEqual({ login: "ana", source: "daemon", problem: null });
		expect(report.daemon).toMatchObject({ running: true, pid: daemon.pid, restartPending: false });
		expect(report.connection.state).toBe("connected");
		// The daemon answers status without checking its answer against the schema (ipc.ts): the client's full check
		// (what ipcRequest does) accepts the real daemon's answer as it is.
		const answer = await ipcRequest({ socket: h.paths.socket, clock: systemClock() }, { type: "status" });
		expect(answer.status).toMatchObject({ pid: daemon.pid, connection: { state: "connected" } });
		// So does its status-report answer, which is what the plain `chopin status --json` above printed.
		const request = statusReportRequest(
			{ platform: "linux", env: h.env, cwd: process.cwd(), execPath: process.execPath, main: Bun.main },
			true,
		);
		const built = await ipcRequest(
			{ socket: h.paths.socket, clock: systemClock() },
			{ ...request, paths: { ...request.paths } },
		);
		expect(built.output).toMatchObject({ stderr: "", exitCode: 0 });
		expect(statusReportSchema.parse(JSON.parse(built.output!.stdout))).toMatchObject({
			daemon: report.daemon,
			checkouts: report.checkouts,
			account: report.account,
		});
		// The server heard the report.
		await eventually("the server's view of both checkouts", async () => {
			const view = await machines.server.context.machines.view(machineId, "ana");
			return view?.checkouts.length === 2;
		});

		// A second daemon for the same state dir is refused, naming the first.
		const second = await runCliProcess(["run"], h.env);
		expect(second.code).toBe(14);
		expect(second.stderr).toContain(`(pid ${daemon.pid})`);

		// chopin logs shows the daemon's own log.
		const logs = await runCliProcess(["logs", "-n", "200"], h.env);
		expect(logs.code).toBe(0);
		expect(logs.stdout).toContain("INFO  connected");
		expect(logs.stdout).toContain(`serving checkout checkout=${other} repository=octo/other`);
	}, 30_000);

	test("reload: the daemon serves what machine.json lists now, and releases the rest", async () => {
		const machines = await serve();
		const h = await home();
		const other = await h.makeCheckout("other", "octo/other");
		await pairHome(machines, h, [
			{ path: h.checkout, repository: "octo/score" },
			{ path: other, repository: "octo/other" },
		]);
		const daemon = spawnCli(["run"], h.env);
		await daemon.waitFor(CONNECTED);
		const config = loadMachineConfig(h.paths)!;
		saveMachineConfig(h.paths, { ...config, checkouts: config.checkouts.filter((c) => c.path !== other) });
		const ipc = { socket: h.paths.socket, clock: systemClock() };
		expect(await ipcRequest(ipc, { type: "reload" })).toEqual({ type: "reload" });
		const status = (await ipcRequest(ipc, { type: "status" })).status;
		expect(status.checkouts.map((c) => c.path)).toEqual([h.checkout]);
		// The released checkout can be locked by someone else now.
		const lock = await lockCheckout({ locksDir: h.paths.checkoutLocksDir }, other);
		await lock.release();
	}, 30_000);

	test("one lock per checkout, whatever the state dir: a second daemon is refused checkout-locked; after kill -9 it serves", async () => {
		const machines = await serve();
		const h = await home();
		await pairHome(machines, h);
		// Another state and config dir for the same user (same HOME), configured with the same checkout.
		const h2 = await home({ HOME: h.env.HOME! });
		await pairHome(machines, h2, [{ path: h.checkout, repository: "octo/score" }]);
		expect(h2.paths.stateDir).not.toBe(h.paths.stateDir);

		const first = spawnCli(["run"], h.env);
		await first.waitFor(CONNECTED);
		const second = await runCliProcess(["run"], h2.env);
		expect(second.code).toBe(14);
		expect(second.stderr).toContain(
			`error: The checkout ${h.checkout} is in use by another chopin process (pid ${first.pid}).`,
		);

		first.kill("SIGKILL");
		await first.exited;
		const next = spawnCli(["run"], h2.env);
		await next.waitFor(CONNECTED);
		const status = (await ipcRequest({ socket: h2.paths.socket, clock: systemClock() }, { type: "status" }))
			.status;
		expect(status.checkouts.map((c) => c.path)).toEqual([h.checkout]);
		next.kill("SIGINT");
		expect(await next.exited).toBe(0);
	}, 60_000);

	test("a SIGKILLed daemon leaves its locks and socket behind; the next daemon replaces them", async () => {
		const machines = await serve();
		const h = await home();
		const { machineId } = await pairHome(machines, h);
		const first = spawnCli(["run"], h.env);
		await first.waitFor(CONNECTED);
		first.kill("SIGKILL");
		await first.exited;
		expect(existsSync(h.paths.socket)).toBe(true);
		const lockNames = () =>
			[...readdirSync(h.paths.locksDir), ...readdirSync(h.paths.checkoutLocksDir)].filter((name) =>
				name.endsWith(".lock"),
			);
		expect(lockNames()).toHaveLength(2); // the daemon's and the checkout's

		const next = spawnCli(["run"], h.env);
		await next.waitFor(CONNECTED);
		await eventually("the machine online", () => machines.online(machineId));
		const status = await runCliProcess(["status"], h.env);
		expect(status.code).toBe(0);
		expect(status.stdout).toContain(`Daemon:     running, pid ${next.pid}`);
		expect(next.stderr()).not.toContain("error:");
		next.kill("SIGINT");
		expect(await next.exited).toBe(0);
		expect(lockNames()).toHaveLength(0);
	}, 30_000);
});
