// The definitions `chopin service install` writes, started exactly as their manager would start them (the unit's
// ExecStart with its Environment= and its output file, the plist's ProgramArguments, the task's action), against a
// real server: each is the daemon, it connects, and each final exit is one its manager's rule does not restart.
import { afterEach, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { markReauthorize } from "../../../server/src/machines/machine-rows";
import { readDaemonExit } from "../local/daemon-exit";
import type { Platform } from "../local/paths";
import { saveMachineConfig } from "../machine/machine-config";
import { eventually } from "../testing/cli-process";
import { createTestContext, type TestContext } from "../testing/context";
import {
	type CliHome,
	type MachineServer,
	makeCliHome,
	pairHome,
	startMachineServer,
} from "../testing/machine-server";
import { durableTempDir, recordingRunner, serviceTestDeps, touch, windowsFiles } from "../testing/service";
import {
	launchdWouldRestart,
	readPlist,
	readUnit,
	startDefinition,
	stopStartedDefinitions,
	systemdWouldRestart,
	taskWouldRestart,
} from "../testing/service-units";
import { installService } from "./install";
import { serviceStatus } from "./status";
import { decodeTaskXml, taskArgv } from "./task-xml";

const servers: MachineServer[] = [];
const homes: CliHome[] = [];
const contexts: TestContext[] = [];
const dirs: string[] = [];
afterEach(async () => {
	await stopStartedDefinitions();
	for (const s of servers.splice(0)) await s.server.close();
	for (const c of contexts.splice(0)) c.cleanup();
	for (const h of homes.splice(0)) rmSync(h.root, { recursive: true, force: true });
	for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const SHOW =
	"systemctl --user show chopin.service --property=LoadState,ActiveState,SubState,MainPID,Result,ExecMainStatus";

async function server(env: Record<string, string> = {}): Promise<MachineServer> {
	const machines = await startMachineServer({ env });
	servers.push(machines);
	return machines;
}

async function pairedHome(machines: MachineServer) {
	const h = await makeCliHome();
	homes.push(h);
	return { h, ...(await pairHome(machines, h)) };
}

/** `chopin service install` for the home, its manager's commands answered: the definition's text and file. */
async function install(h: CliHome, platform: Platform) {
	const ctx = createTestContext({ env: h.env });
	contexts.push(ctx);
	const runner = recordingRunner({
		"systemctl --user show --property=Version": { stdout: "Version=252\n" },
		"loginctl show-user ana --property=Linger --value": { stdout: "yes\n" },
		"systemctl --user daemon-reload": {},
		"systemctl --user enable chopin.service": {},
		[SHOW]: { stdout: "LoadState=loaded\nActiveState=inactive\nMainPID=0\n" },
		"systemctl --user restart chopin.service": {},
		"launchctl print gui/501": {},
		"launchctl print gui/501/dev.chopin.machine": { exitCode: 113, stderr: "Could not find service\n" },
		"launchctl bootout gui/501/dev.chopin.machine": { exitCode: 3 },
		"launchctl enable gui/501/dev.chopin.machine": {},
	});
	let options = {};
	if (platform === "win32") {
		const root = durableTempDir();
		dirs.push(root);
		const files = windowsFiles(root);
		touch(files.host("C:\\Git\\cmd\\git.exe"));
		options = { files, env: { PATH: undefined, Path: "C:\\Git\\cmd" } };
		runner.answer(`schtasks /Query /TN \\Chopin\\chopin-machine /FO LIST /V`, {
			stdout: "Status: Ready\r\n",
		});
		runner.answer("schtasks /Run /TN \\Chopin\\chopin-machine", {});
	}
	const deps = serviceTestDeps(ctx, runner, { platform, uid: 501, ...options });
	// The answers that name the file being written.
	runner.answer(
		`launchctl bootstrap gui/501 ${join(ctx.home, "Library", "LaunchAgents", "dev.chopin.machine.plist")}`,
		{},
	);
	runner.answer(
		`schtasks /Create /TN \\Chopin\\chopin-machine /XML ${h.paths.stateDir.replaceAll("/", "\\")}\\service\\chopin-task.new.xml /F`,
		{},
	);
	const definition = await installService(deps);
	const bytes = deps.files.read(definition.file)!;
	const text = platform === "win32" ? decodeTaskXml(bytes)! : new TextDecoder().decode(bytes);
	return { ctx, deps, runner, definition, text };
}

describe("the systemd unit's own command", () => {
	test("is the daemon: it connects with the unit's variables and writes to the unit's log; revoked, it ends with 10, which the unit does not restart, and service status says why", async () => {
		const machines = await server();
		const { h, machineId } = await pairedHome(machines);
		const { ctx, deps, runner, text } = await install(h, "linux");
		const unit = readUnit(text);
		expect(unit.argv).toEqual([...ctx.selfCommand, "run", "--service", "systemd"]);
		expect(unit.env).toMatchObject({
			CHOPIN_STATE_DIR: h.paths.stateDir,
			CHOPIN_CONFIG_DIR: h.paths.configDir,
		});
		expect(unit.output).toBe(join(h.paths.stateDir, "logs", "service.log"));
		const daemon = startDefinition(unit, h.env.HOME!);
		await eventually("the machine online", () => machines.online(machineId));
		await eventually("the daemon's words in service.log", () =>
			readFileSync(unit.output!, "utf8").includes("serves 1 checkout"),
		);
		await machines.revoke(machineId);
		expect(await daemon.exited).toBe(10);
		expect(systemdWouldRestart(text, 10)).toBe(false);
		expect(systemdWouldRestart(text, 1)).toBe(true);
		expect(readDaemonExit(h.paths)).toMatchObject({
			exitCode: 10,
			code: "machine-revoked",
			service: "systemd",
		});
		runner.answer(SHOW, {
			stdout:
				"LoadState=loaded\nActiveState=failed\nSubState=failed\nMainPID=0\nResult=exit-code\nExecMainStatus=10\n",
		});
		const status = await serviceStatus(deps);
		expect(status).toMatchObject({ state: "stopped", lastExit: { exitCode: 10, code: "machine-revoked" } });
		expect(status.lastExit?.hint).toContain("chopin connect");
	}, 60_000);

	test("every final exit the daemon really ends with (3, 11, 12, 13, 15) is one the unit does not restart", async () => {
		const machines = await server();
		const codes: Record<string, number> = {};

		// 3: not paired (the credential gone).
		const notPaired = await pairedHome(machines);
		const unit3 = readUnit((await install(notPaired.h, "linux")).text);
		rmSync(notPaired.h.paths.credentialFile);
		codes.notPaired = await startDefinition(unit3, notPaired.h.env.HOME!).exited;

		// 11: the owner cannot reach the only checkout's repository.
		const lost = await pairedHome(machines);
		const unit11 = readUnit((await install(lost.h, "linux")).text);
		const privateCheckout = await lost.h.makeCheckout("private", "octo/private");
		saveMachineConfig(lost.h.paths, {
			version: 1,
			server: machines.server.url,
			label: "test machine",
			checkouts: [
				{ path: privateCheckout, repository: "octo/private", origin: "git@github.com:octo/private.git" },
			],
		});
		codes.accessLost = await startDefinition(unit11, lost.h.env.HOME!).exited;

		// 13: its authorization ended (as when GitHub ends it): paired again or nothing.
		const ended = await pairedHome(machines);
		const unit13 = readUnit((await install(ended.h, "linux")).text);
		await markReauthorize(machines.server.context.store, ended.machineId);
		codes.reauthorize = await startDefinition(unit13, ended.h.env.HOME!).exited;

		// 15: another process connects with the same credential (a copied state dir) and takes the machine over.
		const first = await pairedHome(machines);
		const unit15 = readUnit((await install(first.h, "linux")).text);
		const replaced = startDefinition(unit15, first.h.env.HOME!);
		await eventually("the machine online", () => machines.online(first.machineId));
		const copy = await makeCliHome();
		homes.push(copy);
		mkdirSync(copy.paths.stateDir, { recursive: true, mode: 0o700 });
		cpSync(first.h.paths.credentialFile, copy.paths.credentialFile);
		cpSync(first.h.paths.machineConfigFile, copy.paths.machineConfigFile);
		const unitCopy = readUnit((await install(copy, "linux")).text);
		startDefinition(unitCopy, copy.env.HOME!);
		codes.replaced = await replaced.exited;

		// 12: a server that needs a newer chopin than this one (0.1.0).
		const strict = await server({ MIN_CLI_VERSION: "0.1.5" });
		const old = await pairedHome(strict);
		const unit12 = readUnit((await install(old.h, "linux")).text);
		codes.versionRefused = await startDefinition(unit12, old.h.env.HOME!).exited;

		expect(codes).toEqual({
			notPaired: 3,
			accessLost: 11,
			reauthorize: 13,
			replaced: 15,
			versionRefused: 12,
		});
		const { text } = await install(first.h, "linux");
		for (const code of Object.values(codes))
			expect({ code, restart: systemdWouldRestart(text, code) }).toEqual({ code, restart: false });
	}, 60_000);
});

describe("the LaunchAgent's and the task's own commands", () => {
	test("launchd: ProgramArguments with its variables is the daemon; revoked, it ends with 0 (recorded as 10), which KeepAlive does not restart", async () => {
		const machines = await server();
		const { h, machineId } = await pairedHome(machines);
		const { text } = await install(h, "darwin");
		const agent = readPlist(text);
		expect(agent.argv.slice(-3)).toEqual(["run", "--service", "launchd"]);
		const daemon = startDefinition(agent, h.env.HOME!);
		await eventually("the machine online", () => machines.online(machineId));
		await machines.revoke(machineId);
		expect(await daemon.exited).toBe(0);
		expect(launchdWouldRestart(text, 0)).toBe(false);
		expect(readDaemonExit(h.paths)).toMatchObject({
			exitCode: 10,
			code: "machine-revoked",
			service: "launchd",
		});
		expect(readFileSync(agent.output!, "utf8")).toContain(
			"ended with 0 so that launchd does not start it again",
		);
	}, 60_000);

	test("Task Scheduler: the action, with the user's own environment, is the daemon; it appends its own output, and a revocation ends it with 0", async () => {
		const machines = await server();
		const { h, machineId } = await pairedHome(machines);
		const { text } = await install(h, "win32");
		const argv = taskArgv(text)!;
		expect(argv.slice(-3)).toEqual(["run", "--service", "task"]);
		const daemon = startDefinition({ argv, env: h.env, output: undefined }, h.env.HOME!);
		await eventually("the machine online", () => machines.online(machineId));
		await machines.revoke(machineId);
		expect(await daemon.exited).toBe(0);
		expect(taskWouldRestart(text, 0)).toBe(false);
		expect(readDaemonExit(h.paths)).toMatchObject({ exitCode: 10, service: "task" });
		const log = readFileSync(join(h.paths.stateDir, "logs", "service.log"), "utf8");
		expect(log).toContain("serves 1 checkout");
		expect(log).toContain("ended with 0 so that task does not start it again");
	}, 60_000);
});
