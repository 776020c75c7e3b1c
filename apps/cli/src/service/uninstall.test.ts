import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { saveCredential } from "../machine/credential";
import { saveMachineConfig } from "../machine/machine-config";
import { createTestContext, type TestContext } from "../testing/context";
import { sampleCredential } from "../testing/credential";
import { DEAD_PID, durableTempDir, recordingRunner, serviceTestDeps, windowsFiles } from "../testing/service";
import { stopInstalledService } from "./stop";
import { uninstallService } from "./uninstall";

let ctx: TestContext | undefined;
const dirs: string[] = [];
afterEach(() => {
	ctx?.cleanup();
	ctx = undefined;
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const SHOW =
	"systemctl --user show chopin.service --property=LoadState,ActiveState,SubState,MainPID,Result,ExecMainStatus";
const TARGET = "gui/501/dev.chopin.machine";
const TASK = "\\Chopin\\chopin-machine";
const QUERY = `schtasks /Query /TN ${TASK} /FO LIST /V`;

/** A paired machine with a config: what uninstall must leave where it is. */
function machine(platform: "linux" | "darwin" = "linux"): TestContext {
	ctx = createTestContext({ platform });
	saveCredential(ctx, sampleCredential());
	saveMachineConfig(ctx.paths, {
		version: 1,
		server: "https://chopin.example",
		label: "laptop",
		checkouts: [],
	});
	return ctx;
}

function unitFile(c: TestContext): string {
	return join(c.home, ".config", "systemd", "user", "chopin.service");
}

function writeFile(c: TestContext, path: string, text = "installed\n"): void {
	serviceTestDeps(c, recordingRunner()).files.write(path, text, 0o644);
}

describe("service uninstall", () => {
	test("systemd: disable --now (a graceful stop), remove, daemon-reload; the credential and config stay", async () => {
		const c = machine();
		writeFile(c, unitFile(c));
		const runner = recordingRunner({
			"systemctl --user disable --now chopin.service": {},
			"systemctl --user daemon-reload": {},
		});
		const deps = serviceTestDeps(c, runner);
		expect(await uninstallService(deps)).toBe(true);
		expect(runner.calls).toEqual([
			"systemctl --user disable --now chopin.service",
			"systemctl --user daemon-reload",
		]);
		expect(existsSync(unitFile(c))).toBe(false);
		expect(existsSync(c.paths.credentialFile)).toBe(true);
		expect(existsSync(c.paths.machineConfigFile)).toBe(true);
		expect(c.stderr.text()).toBe(
			`Removed the chopin service (${unitFile(c)}); the credential, config and workspaces stay.\n`,
		);
		// Twice: nothing installed, nothing asked, success.
		expect(await uninstallService(deps)).toBe(false);
		expect(runner.calls).toHaveLength(2);
		expect(c.stderr.text()).toEndWith("The chopin service is not installed: there is nothing to remove.\n");
	});

	test("systemd unreachable: the unit still goes (disable works offline), with a warning", async () => {
		const c = machine();
		writeFile(c, unitFile(c));
		const noBus = { exitCode: 1, stderr: "Failed to connect to bus: No medium found\n" };
		const runner = recordingRunner({
			"systemctl --user disable --now chopin.service": noBus,
			"systemctl --user disable chopin.service": {},
			"systemctl --user daemon-reload": noBus,
		});
		expect(await uninstallService(serviceTestDeps(c, runner))).toBe(true);
		expect(runner.calls).toEqual([
			"systemctl --user disable --now chopin.service",
			"systemctl --user disable chopin.service",
			"systemctl --user daemon-reload",
		]);
		expect(existsSync(unitFile(c))).toBe(false);
		expect(c.stderr.text()).toContain(
			"warning: `systemctl --user disable --now chopin.service` failed (Failed to connect to bus: No medium found)",
		);
	});

	test("launchd: boot out (SIGTERM, then its ExitTimeOut) and remove the plist; twice succeeds", async () => {
		const c = machine("darwin");
		const plist = join(c.home, "Library", "LaunchAgents", "dev.chopin.machine.plist");
		writeFile(c, plist);
		const runner = recordingRunner({
			[`launchctl print ${TARGET}`]: { stdout: `${TARGET} = {\n\tstate = running\n\tpid = ${DEAD_PID}\n}\n` },
			[`launchctl bootout ${TARGET}`]: {},
		});
		const deps = serviceTestDeps(c, runner, { platform: "darwin", uid: 501 });
		expect(await uninstallService(deps)).toBe(true);
		expect(runner.calls).toEqual([`launchctl print ${TARGET}`, `launchctl bootout ${TARGET}`]);
		expect(existsSync(plist)).toBe(false);
		runner.answer(`launchctl print ${TARGET}`, {
			exitCode: 113,
			stderr: `Could not find service "dev.chopin.machine" in domain for user gui: 501\n`,
		});
		expect(await uninstallService(deps)).toBe(false);
		expect(runner.calls.slice(2)).toEqual([`launchctl print ${TARGET}`]);
	});

	test("Task Scheduler: a running task with no daemon answering is ended, then deleted; twice succeeds", async () => {
		const c = machine();
		const root = durableTempDir();
		dirs.push(root);
		const files = windowsFiles(root);
		const marker = `${c.paths.stateDir.replaceAll("/", "\\")}\\service\\chopin-task.xml`;
		files.write(marker, "xml", 0o600);
		const runner = recordingRunner({
			[QUERY]: { stdout: `TaskName: ${TASK}\r\nStatus:   Running\r\nLast Result: 267009\r\n` },
			[`schtasks /End /TN ${TASK}`]: {},
			[`schtasks /Delete /TN ${TASK} /F`]: {},
		});
		const deps = serviceTestDeps(c, runner, { platform: "win32", files });
		expect(await uninstallService(deps)).toBe(true);
		expect(runner.calls).toEqual([QUERY, `schtasks /End /TN ${TASK}`, `schtasks /Delete /TN ${TASK} /F`]);
		expect(files.read(marker)).toBeUndefined();
		runner.answer(QUERY, { exitCode: 1, stderr: "ERROR: The system cannot find the file specified.\r\n" });
		expect(await uninstallService(deps)).toBe(false);
		expect(runner.calls.slice(3)).toEqual([QUERY]);
	});
});

describe("stopInstalledService (for chopin stop)", () => {
	test("nothing installed: nothing asked, nothing stopped", async () => {
		const c = machine();
		const runner = recordingRunner();
		expect(await stopInstalledService(serviceTestDeps(c, runner))).toEqual({
			manager: "systemd",
			installed: false,
			stopped: false,
		});
		expect(runner.calls).toEqual([]);
	});

	test("systemd: `stop` when it runs or waits to restart; nothing when it is already stopped", async () => {
		const c = machine();
		writeFile(c, unitFile(c));
		const runner = recordingRunner({
			[SHOW]: { stdout: "LoadState=loaded\nActiveState=activating\nSubState=auto-restart\nMainPID=0\n" },
			"systemctl --user stop chopin.service": {},
		});
		const deps = serviceTestDeps(c, runner);
		expect(await stopInstalledService(deps)).toEqual({ manager: "systemd", installed: true, stopped: true });
		expect(runner.calls).toEqual([SHOW, "systemctl --user stop chopin.service"]);
		runner.answer(SHOW, { stdout: "LoadState=loaded\nActiveState=inactive\nSubState=dead\nMainPID=0\n" });
		expect(await stopInstalledService(deps)).toMatchObject({ installed: true, stopped: false });
		expect(runner.calls.slice(2)).toEqual([SHOW]);
	});

	test("launchd: SIGTERM through launchctl kill (exit 0 is not restarted), and its pid waited for", async () => {
		const c = machine("darwin");
		writeFile(c, join(c.home, "Library", "LaunchAgents", "dev.chopin.machine.plist"));
		const runner = recordingRunner({
			[`launchctl print ${TARGET}`]: { stdout: `${TARGET} = {\n\tstate = running\n\tpid = ${DEAD_PID}\n}\n` },
			[`launchctl kill SIGTERM ${TARGET}`]: {},
		});
		const deps = serviceTestDeps(c, runner, { platform: "darwin", uid: 501 });
		expect(await stopInstalledService(deps)).toEqual({ manager: "launchd", installed: true, stopped: true });
		expect(runner.calls).toEqual([`launchctl print ${TARGET}`, `launchctl kill SIGTERM ${TARGET}`]);
	});

	test("Task Scheduler: a task that is not running has nothing to stop", async () => {
		const c = machine();
		const root = durableTempDir();
		dirs.push(root);
		const files = windowsFiles(root);
		files.write(`${c.paths.stateDir}\\service\\chopin-task.xml`, "xml", 0o600);
		const runner = recordingRunner({ [QUERY]: { stdout: "Status: Ready\r\n" } });
		const deps = serviceTestDeps(c, runner, { platform: "win32", files });
		expect(await stopInstalledService(deps)).toEqual({ manager: "task", installed: true, stopped: false });
		expect(runner.calls).toEqual([QUERY]);
	});
});
