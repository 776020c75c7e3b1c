import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { DaemonExit } from "../local/daemon-exit";
import { writeFileAtomic } from "../local/files";
import type { IpcServer } from "../local/ipc";
import { ensurePrivateDir } from "../local/paths";
import { createTestContext, type TestContext } from "../testing/context";
import {
	DEAD_PID,
	durableTempDir,
	type RecordingRunner,
	reallyRun,
	recordingRunner,
	serviceTestDeps,
	windowsFiles,
} from "../testing/service";
import { serveDaemonStatus } from "../testing/status";
import { launchdPlist } from "./launchd-plist";
import { formatServiceStatus, serviceStatus } from "./status";
import { serviceStatusSchema } from "./status-schema";
import { systemdUnit } from "./systemd-unit";
import { taskXml, taskXmlBytes } from "./task-xml";

let ctx: TestContext | undefined;
let daemon: IpcServer | undefined;
const dirs: string[] = [];
afterEach(async () => {
	await daemon?.close();
	daemon = undefined;
	ctx?.cleanup();
	ctx = undefined;
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const SHOW =
	"systemctl --user show chopin.service --property=LoadState,ActiveState,SubState,MainPID,Result,ExecMainStatus";
const TARGET = "gui/501/dev.chopin.machine";
const TASK_QUERY = "schtasks /Query /TN \\Chopin\\chopin-machine /FO LIST /V";

/** A context with a unit installed that runs this source checkout (so --version really answers). */
function withUnit(): { ctx: TestContext; unit: string; runner: RecordingRunner } {
	ctx = createTestContext();
	const unit = join(ctx.home, ".config", "systemd", "user", "chopin.service");
	const argv = [...ctx.selfCommand, "run", "--service", "systemd"];
	const text = systemdUnit({
		manager: "systemd",
		program: [...ctx.selfCommand],
		argv,
		env: [],
		logFile: join(ctx.paths.stateDir, "logs", "service.log"),
		file: unit,
	});
	const runner = recordingRunner({ [`${ctx.selfCommand.join(" ")} --version`]: reallyRun });
	serviceTestDeps(ctx, runner).files.write(unit, text, 0o644);
	return { ctx, unit, runner };
}

const running = (pid: number) =>
	`LoadState=loaded\nActiveState=active\nSubState=running\nMainPID=${pid}\nResult=success\nExecMainStatus=0\n`;

describe("service status", () => {
	test("not installed: said, with the manager and where the definition would be; nothing asked", async () => {
		ctx = createTestContext();
		const runner = recordingRunner();
		const status = await serviceStatus(serviceTestDeps(ctx, runner));
		expect(serviceStatusSchema.parse(status)).toEqual({
			state: "not-installed",
			manager: "systemd",
			definition: join(ctx.home, ".config", "systemd", "user", "chopin.service"),
			logFile: join(ctx.paths.stateDir, "logs", "service.log"),
			argv: null,
			pid: null,
			runningVersion: null,
			installedVersion: null,
			lastExit: null,
			managerSays: null,
			problem: null,
		});
		expect(runner.calls).toEqual([]);
		expect(formatServiceStatus(status)).toBe(
			"Service:    not installed (systemd); `chopin service install` installs it\n",
		);
	});

	test("stopped after a revocation: the last daemon's reason and what to run, and systemd's own words", async () => {
		const { ctx, unit, runner } = withUnit();
		runner.answer(SHOW, {
			stdout:
				"LoadState=loaded\nActiveState=failed\nSubState=failed\nMainPID=0\nResult=exit-code\nExecMainStatus=10\n",
		});
		ensurePrivateDir(ctx.paths.stateDir);
		const exit: DaemonExit = {
			version: 1,
			pid: 4321,
			at: "2026-01-01T10:00:00.000Z",
			exitCode: 10,
			code: "machine-revoked",
			message:
				"https://chopin.example no longer accepts this machine's credential: it was disconnected (revoked).",
			hint: "Run `chopin connect` to pair this machine again.",
			service: "systemd",
			daemonVersion: "0.1.0",
		};
		// As the daemon writes it as it ends (daemon/daemon-end.ts).
		writeFileAtomic(ctx.paths.daemonExitFile, JSON.stringify(exit));
		const status = await serviceStatus(serviceTestDeps(ctx, runner));
		expect(serviceStatusSchema.parse(status)).toMatchObject({
			state: "stopped",
			definition: unit,
			argv: [...ctx.selfCommand, "run", "--service", "systemd"],
			pid: null,
			lastExit: {
				at: "2026-01-01T10:00:00.000Z",
				exitCode: 10,
				code: "machine-revoked",
				hint: "Run `chopin connect` to pair this machine again.",
			},
			managerSays: "systemd: exit-code, exit status 10",
			problem: null,
		});
		expect(runner.calls).toEqual([SHOW]);
		const text = formatServiceStatus(status);
		expect(text).toContain("Service:    stopped (systemd)\n");
		expect(text).toContain(
			"Last exit:  machine-revoked (exit 10) at 2026-01-01T10:00:00.000Z: https://chopin.example no longer accepts",
		);
		expect(text).toContain("Next:       Run `chopin connect` to pair this machine again.\n");
		expect(text).toContain("Manager:    systemd: exit-code, exit status 10\n");
	});

	test("running, the daemon's version the installed binary's: running, with its pid", async () => {
		const { ctx, runner } = withUnit();
		runner.answer(SHOW, { stdout: running(DEAD_PID) });
		daemon = await serveDaemonStatus(ctx, "https://chopin.example", ctx.version, { pid: DEAD_PID });
		const status = await serviceStatus(serviceTestDeps(ctx, runner));
		expect(status).toMatchObject({
			state: "running",
			pid: DEAD_PID,
			runningVersion: ctx.version,
			installedVersion: ctx.version,
			problem: null,
		});
		expect(runner.calls).toEqual([SHOW, `${ctx.selfCommand.join(" ")} --version`]);
		expect(formatServiceStatus(status)).toContain(
			`Service:    running, pid ${DEAD_PID}, version ${ctx.version} (systemd)\n`,
		);
	});

	test("running an older version than the installed binary's: restart pending", async () => {
		const { ctx, runner } = withUnit();
		runner.answer(SHOW, { stdout: running(DEAD_PID) });
		daemon = await serveDaemonStatus(ctx, "https://chopin.example", "0.0.9", { pid: DEAD_PID });
		const status = await serviceStatus(serviceTestDeps(ctx, runner));
		expect(status).toMatchObject({
			state: "restart-pending",
			runningVersion: "0.0.9",
			installedVersion: ctx.version,
		});
		expect(formatServiceStatus(status)).toContain(
			`restart pending: it runs 0.0.9, ${ctx.version} is installed (\`chopin service install\` restarts it)`,
		);
	});

	test("the installed binary is gone: running, and the problem named", async () => {
		const { ctx, runner } = withUnit();
		runner.answer(SHOW, { stdout: running(DEAD_PID) });
		runner.answer(`${ctx.selfCommand.join(" ")} --version`, {
			exitCode: 127,
			stderr: "bun: command not found",
		});
		const status = await serviceStatus(serviceTestDeps(ctx, runner));
		expect(status).toMatchObject({ state: "running", installedVersion: null });
		expect(status.problem).toContain("the installed chopin did not answer");
	});

	test("systemd cannot be asked: the problem, and the control socket says whether a daemon runs", async () => {
		const { ctx, runner } = withUnit();
		runner.answer(SHOW, { exitCode: 1, stderr: "Failed to connect to bus: No medium found\n" });
		const status = await serviceStatus(serviceTestDeps(ctx, runner));
		expect(status).toMatchObject({
			state: "stopped",
			problem: "the service manager could not be asked: Failed to connect to bus: No medium found",
		});
	});

	test("launchd: `launchctl print` says it runs, with its pid", async () => {
		ctx = createTestContext({ platform: "darwin" });
		const plist = join(ctx.home, "Library", "LaunchAgents", "dev.chopin.machine.plist");
		const runner = recordingRunner({
			[`launchctl print ${TARGET}`]: {
				stdout: `${TARGET} = {\n\tactive count = 1\n\tstate = running\n\tpid = ${DEAD_PID}\n\tlast exit code = (never exited)\n\tendpoints = {\n\t\tstate = active\n\t}\n}\n`,
			},
			"/Applications/chopin --version": { stdout: `${ctx.version}\n` },
		});
		const argv = ["/Applications/chopin", "run", "--service", "launchd"];
		const definition = {
			manager: "launchd" as const,
			program: argv.slice(0, 1),
			argv,
			env: [],
			logFile: "/l",
			file: plist,
		};
		serviceTestDeps(ctx, runner).files.write(plist, launchdPlist(definition), 0o644);
		const status = await serviceStatus(serviceTestDeps(ctx, runner, { platform: "darwin", uid: 501 }));
		expect(status).toMatchObject({
			state: "running",
			manager: "launchd",
			pid: DEAD_PID,
			argv,
			installedVersion: ctx.version,
		});
	});

	test("Task Scheduler in another language: the control socket decides", async () => {
		ctx = createTestContext();
		const root = durableTempDir();
		dirs.push(root);
		const files = windowsFiles(root);
		const marker = `${ctx.paths.stateDir}\\service\\chopin-task.xml`;
		const argv = ["C:\\chopin\\chopin.exe", "run", "--service", "task"];
		const definition = {
			manager: "task" as const,
			program: argv.slice(0, 1),
			argv,
			env: [],
			logFile: "l",
			file: marker,
		};
		files.write(marker, taskXmlBytes(taskXml(definition, "PC\\ana")), 0o600);
		const runner = recordingRunner({
			[TASK_QUERY]: {
				stdout: "Nom de la tâche: \\Chopin\\chopin-machine\r\nStatut: En cours d'exécution\r\n",
			},
			"C:\\chopin\\chopin.exe --version": { stdout: `${ctx.version}\r\n` },
		});
		const deps = serviceTestDeps(ctx, runner, { platform: "win32", files });
		expect(await serviceStatus(deps)).toMatchObject({ state: "stopped", argv });
		// A `chopin run` in a terminal is not the task's daemon.
		daemon = await serveDaemonStatus(ctx, "https://chopin.example", ctx.version, { pid: DEAD_PID });
		expect(await serviceStatus(deps)).toMatchObject({ state: "stopped" });
		await daemon.close();
		daemon = await serveDaemonStatus(ctx, "https://chopin.example", ctx.version, {
			pid: DEAD_PID,
			service: "task",
		});
		expect(await serviceStatus(deps)).toMatchObject({ state: "running", pid: DEAD_PID, manager: "task" });
	});
});
