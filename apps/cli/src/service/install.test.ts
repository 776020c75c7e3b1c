import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Platform } from "../local/paths";
import { saveCredential } from "../machine/credential";
import { saveMachineConfig } from "../machine/machine-config";
import { createTestContext, type TestContext } from "../testing/context";
import { sampleCredential, TOKEN } from "../testing/credential";
import {
	DEAD_PID,
	durableTempDir,
	type RecordingRunner,
	recordingRunner,
	serviceTestDeps,
	touch,
	windowsFiles,
	withClockRunning,
} from "../testing/service";
import type { ServiceDeps } from "./deps";
import { installService } from "./install";
import { launchdPlist } from "./launchd-plist";
import { systemdUnit } from "./systemd-unit";
import { decodeTaskXml, taskXml } from "./task-xml";

let ctx: TestContext | undefined;
const dirs: string[] = [];
afterEach(() => {
	ctx?.cleanup();
	ctx = undefined;
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const SHOW =
	"systemctl --user show chopin.service --property=LoadState,ActiveState,SubState,MainPID,Result,ExecMainStatus";
const INACTIVE =
	"LoadState=loaded\nActiveState=inactive\nSubState=dead\nMainPID=0\nResult=success\nExecMainStatus=0\n";

/** A paired machine whose ACP agent is `gemini` in a directory of its own (on PATH after /usr/bin and /bin). */
function pairedMachine(platform: Platform = "linux"): { ctx: TestContext; agentDir: string } {
	const dir = durableTempDir();
	dirs.push(dir);
	const agentDir = join(dir, "npm-global", "bin");
	touch(join(agentDir, "gemini"));
	ctx = createTestContext({ platform, env: { PATH: `/usr/bin:/bin:${agentDir}` } });
	saveCredential(ctx, sampleCredential());
	saveMachineConfig(ctx.paths, {
		version: 1,
		server: "https://chopin.example",
		label: "laptop",
		checkouts: [],
		acpCommand: ["gemini", "--experimental-acp"],
	});
	return { ctx, agentDir };
}

function systemdRunner(): RecordingRunner {
	return recordingRunner({
		"systemctl --user show --property=Version": { stdout: "Version=252.38-1~deb12u1\n" },
		"loginctl show-user ana --property=Linger --value": { stdout: "yes\n" },
		"systemctl --user daemon-reload": {},
		"systemctl --user enable chopin.service": {
			stderr: "Created symlink /home/ana/.config/systemd/user/default.target.wants/chopin.service.\n",
		},
		[SHOW]: { stdout: INACTIVE },
		"systemctl --user restart chopin.service": {},
	});
}

async function installError(deps: ServiceDeps) {
	return installService(deps).then(
		() => {
			throw new Error("expected the install to fail");
		},
		(error: unknown) => error as { code: string; message: string; hint?: string },
	);
}

describe("service install with systemd", () => {
	test("checks, writes the unit atomically, reloads, enables and restarts; says what it did", async () => {
		const { ctx, agentDir } = pairedMachine();
		const runner = systemdRunner();
		const deps = serviceTestDeps(ctx, runner);
		const definition = await installService(deps);
		expect(runner.calls).toEqual([
			"systemctl --user show --property=Version",
			"loginctl show-user ana --property=Linger --value",
			"systemctl --user daemon-reload",
			"systemctl --user enable chopin.service",
			SHOW,
			"systemctl --user restart chopin.service",
		]);
		const file = join(ctx.home, ".config", "systemd", "user", "chopin.service");
		expect(definition.file).toBe(file);
		expect(readFileSync(file, "utf8")).toBe(systemdUnit(definition));
		expect(readFileSync(file, "utf8")).toContain(`Environment="PATH=${agentDir}:/usr/bin:/bin"\n`);
		expect(statSync(file).mode & 0o777).toBe(0o644);
		// The manager opens the log itself and makes no directory for it.
		expect(statSync(join(ctx.paths.stateDir, "logs")).isDirectory()).toBe(true);
		const [bun, main] = ctx.selfCommand;
		expect(ctx.stderr.text()).toBe(
			[
				`warning: this chopin runs from a source checkout, so the service runs \`${bun} ${main}\`: whatever that checkout holds at each start, not a stable install. Install chopin (docs/install.md) and run \`chopin service install\` from it.`,
				`Installed the chopin service: the systemd user unit ${file}.`,
				`It runs \`${bun} ${main} run --service systemd\`; its output is appended to ${ctx.paths.stateDir}/logs/service.log.`,
				"It is running now, and starts again at login and after a reboot; `chopin service status` shows it.",
				"",
			].join("\n"),
		);
		expect(ctx.stdout.text()).toBe("");
		expect(readFileSync(file, "utf8")).not.toContain(TOKEN);
	});

	test("twice: the second install writes the unit again and restarts the running service", async () => {
		const { ctx } = pairedMachine();
		const runner = systemdRunner();
		const deps = serviceTestDeps(ctx, runner);
		await installService(deps);
		runner.answer(SHOW, {
			stdout: `LoadState=loaded\nActiveState=active\nSubState=running\nMainPID=${DEAD_PID}\n`,
		});
		await installService(deps);
		expect(runner.calls.slice(6)).toEqual(runner.calls.slice(0, 6));
	});

	test("linger off: turned on (a user may do it for themselves) and said", async () => {
		const { ctx } = pairedMachine();
		const runner = systemdRunner();
		runner.answer("loginctl show-user ana --property=Linger --value", { stdout: "no\n" });
		runner.answer("loginctl --no-ask-password enable-linger ana", {});
		await installService(serviceTestDeps(ctx, runner));
		expect(runner.calls.slice(1, 3)).toEqual([
			"loginctl show-user ana --property=Linger --value",
			"loginctl --no-ask-password enable-linger ana",
		]);
		expect(ctx.stderr.text()).toContain("Turned on linger for ana:");
	});

	test("linger needs an administrator: the one sudo command, and nothing installed", async () => {
		const { ctx } = pairedMachine();
		const runner = systemdRunner();
		runner.answer("loginctl show-user ana --property=Linger --value", { stdout: "no\n" });
		runner.answer("loginctl --no-ask-password enable-linger ana", {
			exitCode: 1,
			stderr: "Could not enable linger: Access denied\n",
		});
		const error = await installError(serviceTestDeps(ctx, runner));
		expect(error).toMatchObject({
			code: "service-linger-needs-admin",
			message:
				"Keeping ana's service running after logout and at boot (systemd's linger) needs an administrator here (Could not enable linger: Access denied): nothing was installed.",
			hint: "Run `sudo loginctl enable-linger ana`, then `chopin service install` again.",
		});
		expect(runner.calls.at(-1)).toBe("loginctl --no-ask-password enable-linger ana");
		expect(existsSync(join(ctx.home, ".config", "systemd", "user", "chopin.service"))).toBe(false);
	});

	test("no systemd as init (a container, WSL without systemd): what to do instead, nothing run or written", async () => {
		const { ctx } = pairedMachine();
		const runner = recordingRunner();
		const error = await installError(serviceTestDeps(ctx, runner, { systemdBooted: false }));
		expect(error.code).toBe("service-manager-unavailable");
		expect(error.message).toContain("does not run systemd as its init");
		expect(error.hint).toContain("`chopin run` from your own startup");
		expect(error.hint).toContain("systemd=true");
		expect(runner.calls).toEqual([]);
		expect(existsSync(join(ctx.home, ".config", "systemd"))).toBe(false);
	});

	test("`systemctl --user` cannot reach a user manager (su, sudo, no XDG_RUNTIME_DIR): said, nothing written", async () => {
		const { ctx } = pairedMachine();
		const runner = recordingRunner({
			"systemctl --user show --property=Version": {
				exitCode: 1,
				stderr: "Failed to connect to bus: No medium found\n",
			},
		});
		const error = await installError(serviceTestDeps(ctx, runner));
		expect(error).toMatchObject({
			code: "service-manager-unavailable",
			message:
				"`systemctl --user` cannot reach your systemd user manager: Failed to connect to bus: No medium found.",
		});
		expect(runner.calls).toEqual(["systemctl --user show --property=Version"]);
		expect(existsSync(join(ctx.home, ".config", "systemd"))).toBe(false);
	});

	test("an agent that does not resolve: named, and nothing asked of systemd or written", async () => {
		const { ctx } = pairedMachine();
		saveMachineConfig(ctx.paths, {
			version: 1,
			server: "https://chopin.example",
			label: "laptop",
			checkouts: [],
			acpCommand: ["no-such-agent"],
			planner: {
				command: ["no-such-planner"],
				env: {},
				documents: [],
				sandbox: { enabled: true, write: [] },
			},
		});
		const runner = recordingRunner();
		const error = await installError(serviceTestDeps(ctx, runner));
		expect(error).toMatchObject({
			code: "service-command-unresolved",
			message:
				"The service could not start the ACP agent `no-such-agent` (not found on PATH), the Planner backend `no-such-planner` (not found on PATH): nothing was installed.",
		});
		expect(runner.calls).toEqual([]);
		expect(existsSync(join(ctx.home, ".config", "systemd"))).toBe(false);
	});

	test("not paired: nothing to serve, so nothing installed", async () => {
		ctx = createTestContext();
		const runner = recordingRunner();
		expect((await installError(serviceTestDeps(ctx, runner))).code).toBe("not-paired");
		expect(runner.calls).toEqual([]);
	});
});

describe("service install with launchd", () => {
	const TARGET = "gui/501/dev.chopin.machine";

	function launchdRunner(plist: string): RecordingRunner {
		return recordingRunner({
			"launchctl print gui/501": { stdout: "gui/501 = {\n\ttype = login\n}\n" },
			[`launchctl print ${TARGET}`]: {
				exitCode: 113,
				stderr: `Could not find service "dev.chopin.machine" in domain for user gui: 501\n`,
			},
			[`launchctl bootout ${TARGET}`]: { exitCode: 3, stderr: "Boot-out failed: 3: No such process\n" },
			[`launchctl enable ${TARGET}`]: {},
			[`launchctl bootstrap gui/501 ${plist}`]: {},
		});
	}

	test("writes the plist, boots out what was loaded, enables and bootstraps it in gui/<uid>", async () => {
		const { ctx, agentDir } = pairedMachine("darwin");
		const plist = join(ctx.home, "Library", "LaunchAgents", "dev.chopin.machine.plist");
		const runner = launchdRunner(plist);
		const deps = serviceTestDeps(ctx, runner, { platform: "darwin", uid: 501 });
		const definition = await installService(deps);
		expect(runner.calls).toEqual([
			"launchctl print gui/501",
			`launchctl print ${TARGET}`,
			`launchctl bootout ${TARGET}`,
			`launchctl enable ${TARGET}`,
			`launchctl bootstrap gui/501 ${plist}`,
		]);
		expect(readFileSync(plist, "utf8")).toBe(launchdPlist(definition));
		expect(definition.env[0]).toEqual(["PATH", `${agentDir}:/usr/bin:/bin`]);
		expect(statSync(plist).mode & 0o777).toBe(0o644);
		expect(ctx.stderr.text()).toContain(`Installed the chopin service: the LaunchAgent ${plist}.`);
	});

	test("a bootstrap that meets the booted-out agent still going (EIO) is tried again", async () => {
		const { ctx } = pairedMachine("darwin");
		const plist = join(ctx.home, "Library", "LaunchAgents", "dev.chopin.machine.plist");
		const runner = launchdRunner(plist);
		runner.answer(`launchctl print ${TARGET}`, {
			stdout: `${TARGET} = {\n\tstate = running\n\tpid = ${DEAD_PID}\n}\n`,
		});
		let attempts = 0;
		runner.answer(`launchctl bootstrap gui/501 ${plist}`, async () =>
			++attempts === 1 ? { exitCode: 5, stderr: "Bootstrap failed: 5: Input/output error\n" } : {},
		);
		const deps = serviceTestDeps(ctx, runner, { platform: "darwin", uid: 501 });
		await withClockRunning(ctx.clock, () => installService(deps));
		expect(runner.calls.filter((c) => c.startsWith("launchctl bootstrap"))).toHaveLength(2);
	});

	test("no login session for the user (over ssh with nobody logged in): said, nothing written", async () => {
		const { ctx } = pairedMachine("darwin");
		const runner = recordingRunner({
			"launchctl print gui/501": { exitCode: 113, stderr: "Could not find domain for user gui: 501\n" },
		});
		const error = await installError(serviceTestDeps(ctx, runner, { platform: "darwin", uid: 501 }));
		expect(error.code).toBe("service-manager-unavailable");
		expect(error.message).toContain("Could not find domain for user gui: 501");
		expect(existsSync(join(ctx.home, "Library", "LaunchAgents"))).toBe(false);
	});
});

describe("service install with Task Scheduler", () => {
	const TASK = "\\Chopin\\chopin-machine";
	const EXE = "C:\\Users\\ana\\.chopin\\bin\\chopin.exe";

	function windowsMachine() {
		const root = durableTempDir();
		dirs.push(root);
		const files = windowsFiles(root);
		touch(files.host("C:\\Program Files\\Git\\cmd\\git.exe"));
		touch(files.host("C:\\Users\\ana\\AppData\\Roaming\\npm\\gemini.cmd"));
		const { ctx } = pairedMachine();
		const env = {
			PATH: undefined,
			Path: "C:\\Users\\ana\\AppData\\Roaming\\npm;C:\\Program Files\\Git\\cmd",
			PATHEXT: ".COM;.EXE;.BAT;.CMD",
		};
		return { ctx, files, env };
	}

	test("creates the task from its UTF-16 XML, keeps a copy as the marker, and runs it", async () => {
		const { ctx, files, env } = windowsMachine();
		const marker = `${ctx.paths.stateDir.replaceAll("/", "\\")}\\service\\chopin-task.xml`;
		const pending = `${ctx.paths.stateDir.replaceAll("/", "\\")}\\service\\chopin-task.new.xml`;
		let given: Uint8Array | undefined;
		const runner = recordingRunner({
			[`schtasks /Create /TN ${TASK} /XML ${pending} /F`]: async () => {
				given = files.read(pending);
				return { stdout: `SUCCESS: The scheduled task "${TASK}" has successfully been created.\r\n` };
			},
			[`schtasks /Query /TN ${TASK} /FO LIST /V`]: { stdout: `TaskName:   ${TASK}\r\nStatus:     Ready\r\n` },
			[`schtasks /Run /TN ${TASK}`]: {
				stdout: `SUCCESS: Attempted to run the scheduled task "${TASK}".\r\n`,
			},
		});
		const deps = serviceTestDeps(ctx, runner, { platform: "win32", files, program: [EXE], env });
		const definition = await installService(deps);
		expect(runner.calls).toEqual([
			`schtasks /Create /TN ${TASK} /XML ${pending} /F`,
			`schtasks /Query /TN ${TASK} /FO LIST /V`,
			`schtasks /Run /TN ${TASK}`,
		]);
		expect(definition.file).toBe(marker);
		expect(definition.env).toEqual([]);
		const xml = taskXml(definition, "LAPTOP\\ana");
		expect(decodeTaskXml(given!)).toBe(xml);
		expect(decodeTaskXml(files.read(marker)!)).toBe(xml);
		expect(files.read(pending)).toBeUndefined();
		expect(xml).toContain(`<Command>${EXE}</Command>`);
		expect(xml).toContain("<Arguments>run --service task</Arguments>");
		// The test's own CHOPIN_STATE_DIR and CHOPIN_CONFIG_DIR: an override the task would not see.
		expect(ctx.stderr.text()).toContain(
			"warning: CHOPIN_STATE_DIR is set in this shell; the task gets your user's environment variables, so set it there too (`setx CHOPIN_STATE_DIR <dir>`) or the service uses its default directory.",
		);
		expect(ctx.stderr.text()).toContain(
			`Installed the chopin service: the Task Scheduler task ${TASK} (a copy of its XML in ${marker}).`,
		);
	});

	test("schtasks refuses: its words, and no marker left behind", async () => {
		const { ctx, files, env } = windowsMachine();
		const pending = `${ctx.paths.stateDir.replaceAll("/", "\\")}\\service\\chopin-task.new.xml`;
		const runner = recordingRunner({
			[`schtasks /Create /TN ${TASK} /XML ${pending} /F`]: {
				exitCode: 1,
				stderr: "ERROR: Access is denied.\r\n",
			},
		});
		const deps = serviceTestDeps(ctx, runner, { platform: "win32", files, program: [EXE], env });
		const error = await installError(deps);
		expect(error).toMatchObject({
			code: "service-failed",
			message: `\`schtasks /Create /TN ${TASK} /XML ${pending} /F\` failed: ERROR: Access is denied.`,
		});
		expect(files.read(pending)).toBeUndefined();
		expect(existsSync(join(ctx.paths.stateDir, "service", "chopin-task.xml"))).toBe(false);
	});

	test("a path Task Scheduler would expand (%) is refused before anything is written", async () => {
		const { ctx, files, env } = windowsMachine();
		const runner = recordingRunner();
		const deps = serviceTestDeps(ctx, runner, {
			platform: "win32",
			files,
			program: ["C:\\Users\\100%USER%\\chopin.exe"],
			env,
		});
		expect((await installError(deps)).code).toBe("service-path-unsupported");
		expect(runner.calls).toEqual([]);
	});
});
