import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Platform } from "../local/paths";

import {
	DEAD_PID,
	durableTempDir,
	installError,
	pairedMachines,
	type RecordingRunner,
	recordingRunner,
	serviceTestDeps,
	touch,
	windowsFiles,
	withClockRunning,
} from "../testing/service";
import { installService } from "./install";
import { launchdPlist } from "./launchd-plist";
import { decodeTaskXml, taskXml } from "./task-xml";

const machines = pairedMachines();

const pairedMachine = (platform?: Platform) => machines.paired(platform);

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
		const root = machines.keep(durableTempDir());
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
