import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Platform } from "../local/paths";
import { saveMachineConfig } from "../machine/machine-config";
import { createTestContext } from "../testing/context";
import { TOKEN } from "../testing/credential";
import {
	DEAD_PID,
	installError,
	pairedMachines,
	type RecordingRunner,
	recordingRunner,
	serviceTestDeps,
} from "../testing/service";
import { installService } from "./install";
import { systemdUnit } from "./systemd-unit";

const machines = pairedMachines();

const SHOW =
	"systemctl --user show chopin.service --property=LoadState,ActiveState,SubState,MainPID,Result,ExecMainStatus";
const INACTIVE =
	"LoadState=loaded\nActiveState=inactive\nSubState=dead\nMainPID=0\nResult=success\nExecMainStatus=0\n";

const pairedMachine = (platform?: Platform) => machines.paired(platform);

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

	test("a Planner's --env values and the credential are in no definition and no output", async () => {
		const { ctx, agentDir } = pairedMachine();
		const secret = "planner-api-key-9f8e7d";
		saveMachineConfig(ctx.paths, {
			version: 1,
			server: "https://chopin.example",
			label: "laptop",
			checkouts: [],
			acpCommand: ["gemini"],
			planner: {
				command: [join(agentDir, "gemini"), "--planner"],
				env: { API_KEY: secret },
				documents: [],
				sandbox: { enabled: true, write: [] },
			},
		});
		const definition = await installService(serviceTestDeps(ctx, systemdRunner()));
		const written = readFileSync(definition.file, "utf8");
		for (const text of [written, ctx.stderr.text(), ctx.stdout.text()]) {
			expect(text).not.toContain(secret);
			expect(text).not.toContain(TOKEN);
		}
		expect(written).not.toContain("API_KEY");
	});

	test("not paired: nothing to serve, so nothing installed", async () => {
		const ctx = machines.adopt(createTestContext());
		const runner = recordingRunner();
		expect((await installError(serviceTestDeps(ctx, runner))).code).toBe("not-paired");
		expect(runner.calls).toEqual([]);
	});
});
