// `chopin stop` and how a stopped or refused daemon shows in `chopin status`, with the real CLI against a real server:
// stop leaves the machine paired; a revoked machine's status says so, exits 10 and hints `chopin connect`; under
// launchd or Task Scheduler a final refusal ends with 0 (so the service does not start it again) yet is recorded;
// a stop request file stops the daemon.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { systemClock } from "@chopin/agent-link/clock";
import { cliRequest } from "../../../server/src/testing/machines";
import { readDaemonExit } from "../local/daemon-exit";
import type { ServiceDeps } from "../service/deps";
import { SYSTEMD_UNIT, serviceDefinitionPath, serviceLogPath } from "../service/names";
import { statusReportSchema } from "../status/status-report-schema";
import { eventually, killCliProcesses, runCliProcess, spawnCli } from "../testing/cli-process";
import { createTestContext, type TestContext } from "../testing/context";
import {
	type CliHome,
	type MachineServer,
	makeCliHome,
	pairHome,
	startMachineServer,
} from "../testing/machine-server";
import { type RecordingRunner, recordingRunner, serviceTestDeps } from "../testing/service";
import { stopMachineDaemon } from "./stop";

const servers: MachineServer[] = [];
const homes: CliHome[] = [];
const contexts: TestContext[] = [];
afterEach(async () => {
	await killCliProcesses();
	for (const c of contexts.splice(0)) c.cleanup();
	for (const s of servers.splice(0)) await s.server.close();
	for (const h of homes.splice(0)) rmSync(h.root, { recursive: true, force: true });
});

async function setup() {
	const machines = await startMachineServer();
	servers.push(machines);
	const h = await makeCliHome();
	homes.push(h);
	return { machines, h, ...(await pairHome(machines, h)) };
}

const statusJson = async (h: CliHome) => {
	const result = await runCliProcess(["status", "--json"], h.env);
	return {
		code: result.code,
		report: statusReportSchema.parse(JSON.parse(result.stdout)),
		stderr: result.stderr,
	};
};

describe("chopin stop", () => {
	test("stops the daemon without unpairing: the credential stays, the server still knows the machine; twice is fine", async () => {
		const { machines, h, credential } = await setup();
		const daemon = spawnCli(["run"], h.env);
		await daemon.waitFor(/Connected to /);
		expect(daemon.stderr()).toContain("Ctrl-C or `chopin stop` stops it.");

		const stopped = await runCliProcess(["stop"], h.env);
		expect(stopped).toEqual({
			code: 0,
			stdout: "",
			stderr: `Stopped the chopin daemon (pid ${daemon.pid}).\n`,
		});
		expect(await daemon.exited).toBe(0);
		expect(existsSync(h.paths.credentialFile)).toBe(true);
		const still = await cliRequest(machines.target, "GET", "/api/connector/machine", { credential });
		expect(still.status).toBe(200);

		expect(await runCliProcess(["stop"], h.env)).toEqual({
			code: 0,
			stdout: "",
			stderr: "No chopin daemon is running.\n",
		});
		// Status: not running, stopped cleanly (exit 4: paired, not connected), and how to start it again.
		const { code, report, stderr } = await statusJson(h);
		expect(code).toBe(4);
		expect(report.daemon).toMatchObject({ running: false, lastExit: { exitCode: 0, code: "stopped" } });
		expect(stderr).toContain("hint: Start it with `chopin run` or `chopin service install`.");
	}, 30_000);

	test("a stop request file stops the daemon (Task Scheduler's way in) and is taken", async () => {
		const { h } = await setup();
		const daemon = spawnCli(["run"], h.env);
		await daemon.waitFor(/Connected to /);
		writeFileSync(h.paths.stopRequestFile, "");
		expect(await daemon.exited).toBe(0);
		expect(existsSync(h.paths.stopRequestFile)).toBe(false);
	}, 30_000);
});

describe("chopin stop with a service installed", () => {
	const SHOW =
		"systemctl --user show chopin.service --property=LoadState,ActiveState,SubState,MainPID,Result,ExecMainStatus";

	/**
	 * A context on the home's state (the CLI's own, in-process), with a systemd unit installed; on the system clock,
	 * since it waits for a real daemon to end.
	 */
	function withUnit(h: CliHome) {
		const manual = createTestContext({
			env: {
				HOME: h.env.HOME,
				CHOPIN_STATE_DIR: h.env.CHOPIN_STATE_DIR,
				CHOPIN_CONFIG_DIR: h.env.CHOPIN_CONFIG_DIR,
			},
		});
		contexts.push(manual);
		const c = { ...manual, clock: systemClock() };
		const unit = serviceDefinitionPath("linux", c.env, c.home, c.paths.stateDir);
		serviceTestDeps(manual, recordingRunner()).files.write(unit, "[Unit]\n", 0o644);
		const deps = (runner: RecordingRunner): ServiceDeps => ({
			...serviceTestDeps(manual, runner),
			clock: c.clock,
		});
		return { c, deps };
	}

	test("asks the manager first (a daemon stopped through its socket would be restarted), then finds nothing left", async () => {
		const { h } = await setup();
		const daemon = spawnCli(["run", "--service", "systemd"], h.env);
		await daemon.waitFor(/Connected to /);
		const { c, deps } = withUnit(h);
		const runner = recordingRunner({
			[SHOW]: { stdout: `LoadState=loaded\nActiveState=active\nSubState=running\nMainPID=${daemon.pid}\n` },
			// What systemd does on stop: SIGTERM to the main process, and wait for it.
			[`systemctl --user stop ${SYSTEMD_UNIT}`]: async () => {
				process.kill(daemon.pid, "SIGTERM");
				await daemon.exited;
				return {};
			},
		});
		expect(await stopMachineDaemon(c, deps(runner))).toBe(true);
		expect(runner.calls).toEqual([SHOW, `systemctl --user stop ${SYSTEMD_UNIT}`]);
		expect(await daemon.exited).toBe(0);
		expect(c.stderr.text()).toBe(
			"Stopped the chopin service (systemd user unit chopin.service); it stays installed and starts again at the next login.\n",
		);
		expect(existsSync(h.paths.credentialFile)).toBe(true);
	}, 30_000);

	test("a stopped service and a daemon in a terminal: the manager is asked, the terminal's daemon stopped", async () => {
		const { h } = await setup();
		const daemon = spawnCli(["run"], h.env);
		await daemon.waitFor(/Connected to /);
		const { c, deps } = withUnit(h);
		const runner = recordingRunner({
			[SHOW]: { stdout: "LoadState=loaded\nActiveState=inactive\nSubState=dead\nMainPID=0\n" },
		});
		expect(await stopMachineDaemon(c, deps(runner))).toBe(true);
		expect(runner.calls).toEqual([SHOW]);
		expect(await daemon.exited).toBe(0);
		expect(c.stderr.text()).toBe(`Stopped the chopin daemon (pid ${daemon.pid}).\n`);
	}, 30_000);
});

describe("a machine revoked while its daemon ran", () => {
	test("status says it was revoked, exits 10 and hints `chopin connect`, not `chopin run`", async () => {
		const { machines, h, machineId } = await setup();
		const daemon = spawnCli(["run"], h.env);
		await daemon.waitFor(/Connected to /);
		await machines.server.context.machines.revoke(machineId);
		expect(await daemon.exited).toBe(10);

		const text = await runCliProcess(["status"], h.env);
		expect(text.code).toBe(10);
		expect(text.stdout).toMatch(/Daemon: +not running; the last one ended .* with exit 10: .*revoked/);
		expect(text.stderr).toContain("error: ");
		expect(text.stderr).toContain("revoked");
		expect(text.stderr).toContain("hint: Run `chopin connect` to pair this machine again.");
		const { code, report } = await statusJson(h);
		expect(code).toBe(10);
		expect(report.daemon).toMatchObject({
			running: false,
			lastExit: { exitCode: 10, code: "machine-revoked" },
		});
	}, 30_000);

	test("under launchd or Task Scheduler the daemon ends a final refusal with 0 (no restart), and records exit 10", async () => {
		for (const service of ["launchd", "task"] as const) {
			const { machines, h, machineId } = await setup();
			const daemon = spawnCli(["run", "--service", service], h.env);
			await eventually("connected", () => machines.online(machineId));
			await machines.server.context.machines.revoke(machineId);
			expect(await daemon.exited).toBe(0);
			expect(readDaemonExit(h.paths)).toMatchObject({ exitCode: 10, code: "machine-revoked", service });
			expect((await statusJson(h)).code).toBe(10);
			if (service === "task") {
				// Task Scheduler keeps no output: the daemon appended its own to the service's log.
				const log = readFileSync(serviceLogPath("linux", h.paths.stateDir), "utf8");
				expect(log).toContain("Connected to ");
				expect(log).toContain(
					"Stopped for good (exit 10, ended with 0 so that task does not start it again).",
				);
			} else {
				expect(daemon.stderr()).toContain("ended with 0 so that launchd does not start it again");
			}
		}
	}, 60_000);
});
