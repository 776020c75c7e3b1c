import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { createTestContext, type TestContext } from "../testing/context";
import { durableTempDir, recordingRunner, serviceTestDeps } from "../testing/service";
import { buildDefinition, type ServiceDefinition } from "./definition";
import { systemdUnit, unitArgv } from "./systemd-unit";

let ctx: TestContext | undefined;
const dirs: string[] = [];
afterEach(() => {
	ctx?.cleanup();
	ctx = undefined;
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Every character systemd.syntax gives a meaning to, in one path. */
const HOSTILE = `we ird/%h $HOME $\{USER} "q" back\\slash 'single' semi;colon`;

function hostileDefinition(): ServiceDefinition {
	const dir = durableTempDir();
	dirs.push(dir);
	const base = join(dir, HOSTILE);
	return {
		manager: "systemd",
		program: [process.execPath, `${base}/main.ts`],
		argv: [process.execPath, `${base}/main.ts`, "run", "--service", "systemd"],
		env: [
			["PATH", `/usr/bin:/bin:${base}/bin`],
			["CHOPIN_STATE_DIR", `${base}/state`],
			["CHOPIN_CONFIG_DIR", `${base}/config`],
		],
		logFile: `${base}/state/logs/service.log`,
		file: join(dir, "chopin.service"),
	};
}

async function verify(text: string): Promise<{ exitCode: number; output: string }> {
	const dir = durableTempDir();
	dirs.push(dir);
	const file = join(dir, "chopin.service");
	writeFileSync(file, text);
	const result = await execa("systemd-analyze", ["verify", file], { reject: false });
	return { exitCode: result.exitCode ?? 1, output: `${result.stdout}${result.stderr}` };
}

describe("the systemd unit", () => {
	test("is exactly this for a machine: the running chopin, its dirs and PATH, the restart rules, the log", () => {
		ctx = createTestContext({ env: { PATH: "/usr/local/bin:/usr/bin:/bin" } });
		const deps = serviceTestDeps(ctx, recordingRunner());
		const { definition } = buildDefinition(deps, undefined);
		const [bun, main] = ctx.selfCommand;
		const state = ctx.paths.stateDir;
		expect(systemdUnit(definition)).toBe(
			[
				"# chopin's user service, written by `chopin service install` and removed by `chopin service uninstall`.",
				"# Install again rather than edit it: every install rewrites this file.",
				"[Unit]",
				"Description=Chopin machine daemon (chopin run)",
				"",
				"[Service]",
				"Type=simple",
				`ExecStart="${bun}" "${main}" "run" "--service" "systemd"`,
				'Environment="PATH=/usr/local/bin:/usr/bin:/bin"',
				`Environment="CHOPIN_STATE_DIR=${state}"`,
				`Environment="CHOPIN_CONFIG_DIR=${ctx.paths.configDir}"`,
				"Restart=always",
				"RestartSec=5",
				"RestartPreventExitStatus=3 10 11 12 13 15",
				"KillMode=mixed",
				"TimeoutStopSec=30",
				`StandardOutput=append:${state}/logs/service.log`,
				`StandardError=append:${state}/logs/service.log`,
				"",
				"[Install]",
				"WantedBy=default.target",
				"",
			].join("\n"),
		);
		expect(definition.file).toBe(join(ctx.home, ".config", "systemd", "user", "chopin.service"));
	});

	test("passes `systemd-analyze verify` without a word, hostile paths included", async () => {
		ctx = createTestContext();
		const { definition } = buildDefinition(serviceTestDeps(ctx, recordingRunner()), undefined);
		expect(await verify(systemdUnit(definition))).toEqual({ exitCode: 0, output: "" });
		expect(await verify(systemdUnit(hostileDefinition()))).toEqual({ exitCode: 0, output: "" });
		// The check has teeth: a program that does not exist fails it.
		const missing = { ...hostileDefinition(), argv: ["/nonexistent/chopin", "run", "--service", "systemd"] };
		expect((await verify(systemdUnit(missing))).exitCode).toBe(1);
	});

	test("reads back to the argv it was written from", () => {
		const definition = hostileDefinition();
		expect(unitArgv(systemdUnit(definition))).toEqual(definition.argv);
		expect(unitArgv("[Service]\nType=simple\n")).toBeUndefined();
	});

	const canDump =
		process.getuid?.() === 0 && existsSync("/lib/systemd/systemd") && Bun.which("runuser") !== null;
	test.skipIf(!canDump && process.env.CHOPIN_TEST_REQUIRE_ALL !== "1")(
		"systemd itself reads hostile paths back exactly (systemd --test --user as nobody dumps the parsed unit)",
		async () => {
			const definition = hostileDefinition();
			const dump = await systemdDump(systemdUnit(definition));
			const base = definition.argv[1]!.slice(0, -"/main.ts".length);
			expect(dump).toContain("\t\tUnit Load State: loaded\n");
			expect(dump).toContain("\t\tRestart: always\n");
			expect(dump).toContain("\t\tRestartSec: 5s\n");
			expect(dump).toContain("\t\tTimeoutStopSec: 30s\n");
			expect(dump).toContain("\t\tKillMode: mixed\n");
			expect(dump).toContain(`\t\tEnvironment: PATH=/usr/bin:/bin:${base}/bin\n`);
			expect(dump).toContain(`\t\tEnvironment: CHOPIN_STATE_DIR=${base}/state\n`);
			expect(dump).toContain(`\t\tEnvironment: CHOPIN_CONFIG_DIR=${base}/config\n`);
			expect(dump).toContain(`\t\tStandardOutputFileToAppend: ${base}/state/logs/service.log\n`);
			expect(dump).toContain(`\t\tStandardErrorFileToAppend: ${base}/state/logs/service.log\n`);
			// The dump shows ExecStart's words before variable expansion, where `$$` is still doubled (it runs as `$`).
			const line = /\t\t\tCommand Line: (.*)\n/.exec(dump)?.[1];
			const shown = `"${base.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("$", "\\$\\$")}/main.ts"`;
			expect(line).toBe(`${process.execPath} ${shown} run --service systemd`);
		},
	);
});

/**
 * The unit as systemd parses it: `systemd --test --user` loads the user's units and dumps the initial transaction.
 * It refuses to run as root in user mode, so it runs as nobody over a copy in a directory nobody can read.
 */
async function systemdDump(text: string): Promise<string> {
	const dir = durableTempDir();
	dirs.push(dir);
	const units = join(dir, "config", "systemd", "user");
	mkdirSync(join(units, "default.target.wants"), { recursive: true });
	mkdirSync(join(dir, "runtime"));
	writeFileSync(join(units, "chopin.service"), text);
	symlinkSync("../chopin.service", join(units, "default.target.wants", "chopin.service"));
	const nobody = await execa("id", ["-u", "nobody"]);
	const uid = Number(nobody.stdout);
	for (const path of [dir, join(dir, "config"), join(dir, "config", "systemd"), units, join(dir, "runtime")])
		chownSync(path, uid, uid);
	chmodSync(dir, 0o755);
	chmodSync(join(dir, "runtime"), 0o700);
	const result = await execa(
		"runuser",
		["-u", "nobody", "--", "/lib/systemd/systemd", "--test", "--user", "--no-pager"],
		{
			cwd: dir,
			env: {
				PATH: "/usr/sbin:/usr/bin:/sbin:/bin",
				HOME: dir,
				XDG_CONFIG_HOME: join(dir, "config"),
				XDG_RUNTIME_DIR: join(dir, "runtime"),
			},
			extendEnv: false,
			reject: false,
		},
	);
	const start = result.stdout.indexOf("-> Unit chopin.service:");
	expect(start).toBeGreaterThanOrEqual(0);
	const end = result.stdout.indexOf("\t-> Unit ", start + 1);
	return result.stdout.slice(start, end < 0 ? undefined : end);
}
