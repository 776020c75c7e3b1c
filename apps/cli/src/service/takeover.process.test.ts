// `chopin service install` and `uninstall` with real daemons running, against a real server: a `chopin run` in a
// terminal is stopped through its control socket before the service starts; the service's own daemon is left to its
// manager's restart; the task's daemon is stopped through the stop request (Task Scheduler would only kill it), and a
// terminal daemon is not the task's to stop.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { readDaemonExit } from "../local/daemon-exit";
import { isAlive } from "../local/process-liveness";
import { eventually, killCliProcesses, spawnCli } from "../testing/cli-process";
import { createTestContext, type TestContext } from "../testing/context";
import {
	type CliHome,
	type MachineServer,
	makeCliHome,
	pairHome,
	startMachineServer,
} from "../testing/machine-server";
import {
	durableTempDir,
	recordingRunner,
	serviceTestDeps,
	windowsFiles,
	withClockRunning,
} from "../testing/service";
import { readUnit, startDefinition, stopStartedDefinitions } from "../testing/service-units";
import type { ServiceDeps } from "./deps";
import { installService } from "./install";
import { uninstallService } from "./uninstall";

let machines: MachineServer | undefined;
const homes: CliHome[] = [];
const contexts: TestContext[] = [];
const dirs: string[] = [];
afterEach(async () => {
	await killCliProcesses();
	await stopStartedDefinitions();
	await machines?.server.close();
	machines = undefined;
	for (const c of contexts.splice(0)) c.cleanup();
	for (const h of homes.splice(0)) rmSync(h.root, { recursive: true, force: true });
	for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const SHOW =
	"systemctl --user show chopin.service --property=LoadState,ActiveState,SubState,MainPID,Result,ExecMainStatus";
const TASK = "\\Chopin\\chopin-machine";
const QUERY = `schtasks /Query /TN ${TASK} /FO LIST /V`;

async function paired() {
	machines = await startMachineServer();
	const h = await makeCliHome();
	homes.push(h);
	const { machineId } = await pairHome(machines, h);
	const ctx = createTestContext({ env: h.env });
	contexts.push(ctx);
	return { h, ctx, machineId };
}

function systemdRunner() {
	return recordingRunner({
		"systemctl --user show --property=Version": { stdout: "Version=252\n" },
		"loginctl show-user ana --property=Linger --value": { stdout: "yes\n" },
		"systemctl --user daemon-reload": {},
		"systemctl --user enable chopin.service": {},
		[SHOW]: { stdout: "LoadState=loaded\nActiveState=inactive\nMainPID=0\n" },
	});
}

describe("service install with a daemon already running", () => {
	test("a `chopin run` in a terminal is stopped through its socket, and said, before the service starts", async () => {
		const { h, ctx } = await paired();
		const terminal = spawnCli(["run"], h.env);
		await terminal.waitFor(/Connected to /);
		const runner = systemdRunner();
		let stillRunningAtRestart: boolean | undefined;
		runner.answer("systemctl --user restart chopin.service", async () => {
			stillRunningAtRestart = isAlive({ pid: terminal.pid });
			return {};
		});
		await withClockRunning(ctx.clock, () => installService(serviceTestDeps(ctx, runner)));
		expect(await terminal.exited).toBe(0);
		expect(stillRunningAtRestart).toBe(false);
		expect(runner.calls.at(-1)).toBe("systemctl --user restart chopin.service");
		expect(ctx.stderr.text()).toContain(
			`A chopin daemon (pid ${terminal.pid}) runs outside the service (\`chopin run\` in a terminal?): stopping it so that the service serves this machine.\nStopped the chopin daemon (pid ${terminal.pid}).\n`,
		);
		expect(readDaemonExit(h.paths)).toMatchObject({ code: "stopped", exitCode: 0 });
	}, 60_000);

	test("the service's own daemon (systemd's MainPID) is left for `restart` to replace", async () => {
		const { h, ctx, machineId } = await paired();
		const runner = systemdRunner();
		runner.answer("systemctl --user restart chopin.service", {});
		const deps = serviceTestDeps(ctx, runner);
		const definition = await installService(deps);
		const unitDaemon = startDefinition(
			readUnit(new TextDecoder().decode(deps.files.read(definition.file))),
			h.env.HOME!,
		);
		await eventually("the machine online", () => machines!.online(machineId));
		runner.answer(SHOW, { stdout: `LoadState=loaded\nActiveState=active\nMainPID=${unitDaemon.pid}\n` });
		await installService(deps);
		expect(isAlive({ pid: unitDaemon.pid })).toBe(true);
		expect(ctx.stderr.text()).not.toContain("runs outside the service");
	}, 60_000);
});

describe("service uninstall with Task Scheduler and a real daemon", () => {
	function taskDeps(ctx: TestContext, runner: ReturnType<typeof recordingRunner>): ServiceDeps {
		const root = durableTempDir();
		dirs.push(root);
		// Windows' files mapped onto this host; the daemon's socket and stop request are this host's own.
		const files = windowsFiles(root);
		files.write(`${ctx.paths.stateDir.replaceAll("/", "\\")}\\service\\chopin-task.xml`, "xml", 0o600);
		return serviceTestDeps(ctx, runner, { platform: "win32", files });
	}

	test("the task's daemon is stopped through the stop request (no /End needed), then the task deleted", async () => {
		const { h, ctx, machineId } = await paired();
		// Its output goes to the service's log (Task Scheduler keeps none): the server says when it is connected.
		const daemon = spawnCli(["run", "--service", "task"], h.env);
		await eventually("the task's daemon connected", () => machines!.online(machineId));
		const runner = recordingRunner({
			[QUERY]: { stdout: `TaskName: ${TASK}\r\nStatus:   Running\r\n` },
			[`schtasks /Delete /TN ${TASK} /F`]: {},
		});
		const deps = taskDeps(ctx, runner);
		expect(await withClockRunning(ctx.clock, () => uninstallService(deps))).toBe(true);
		expect(await daemon.exited).toBe(0);
		expect(runner.calls).toEqual([QUERY, `schtasks /Delete /TN ${TASK} /F`]);
		expect(existsSync(h.paths.stopRequestFile)).toBe(false);
		expect(readDaemonExit(h.paths)).toMatchObject({ code: "stopped", service: "task" });
	}, 60_000);

	test("a `chopin run` in a terminal is not the task's: left running", async () => {
		const { h, ctx } = await paired();
		const terminal = spawnCli(["run"], h.env);
		await terminal.waitFor(/Connected to /);
		const runner = recordingRunner({
			[QUERY]: { stdout: `TaskName: ${TASK}\r\nStatus:   Ready\r\n` },
			[`schtasks /Delete /TN ${TASK} /F`]: {},
		});
		expect(await uninstallService(taskDeps(ctx, runner))).toBe(true);
		expect(isAlive({ pid: terminal.pid })).toBe(true);
		expect(existsSync(h.paths.stopRequestFile)).toBe(false);
	}, 60_000);
});
