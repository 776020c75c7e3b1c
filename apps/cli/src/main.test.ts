import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import cliPackage from "../package.json" with { type: "json" };
import { resolvePaths } from "./local/paths";
import { Secrets } from "./local/secrets";
import { saveCredential } from "./machine/credential";
import { runCliProcess } from "./testing/cli-process";
import { closedOrigin } from "./testing/closed-port";
import { makeTempDir } from "./testing/context";
import { sampleCredential, TOKEN } from "./testing/credential";

const MAIN = join(import.meta.dir, "main.ts");
const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function home(): { root: string; env: Record<string, string> } {
	const root = makeTempDir("chopin-main-");
	dirs.push(root);
	return {
		root,
		env: {
			PATH: process.env.PATH ?? "",
			HOME: join(root, "home"),
			CHOPIN_STATE_DIR: join(root, "state"),
			CHOPIN_CONFIG_DIR: join(root, "config"),
			CHOPIN_LOG_LEVEL: "debug",
		},
	};
}

const chopin = runCliProcess;

describe("bun apps/cli/src/main.ts as a real process", () => {
	test("--version prints the package version and exits 0", async () => {
		const { env, root } = home();
		const result = await chopin(["--version"], env);
		expect(result).toEqual({ stdout: `${cliPackage.version}\n`, stderr: "", code: 0 });
		// Printing the version touches no state or config.
		expect(readdirSync(root).filter((name) => name !== "home")).toEqual([]);
	}, 30_000);

	test("a usage error: two lines on stderr, exit 2", async () => {
		const { env } = home();
		const result = await chopin(["connect", "gemini", "--acp"], env);
		expect(result.code).toBe(2);
		expect(result.stdout).toBe("");
		expect(result.stderr).toBe(
			"error: Unknown option '--acp'.\nhint: Put the ACP agent's command after `--`, for example: chopin connect -- gemini --acp\n",
		);
	}, 30_000);

	test("the service commands before anything is paired or installed: nothing run, nothing written", async () => {
		const { env, root } = home();
		// No service manager command runs: install stops at the missing pairing, status at the missing definition.
		const install = await chopin(["service", "install"], env);
		expect(install).toEqual({
			code: 3,
			stdout: "",
			stderr: "error: This machine is not paired with a Chopin server.\nhint: Run `chopin connect` first.\n",
		});
		const status = await chopin(["service", "status"], env);
		expect(status.code).toBe(0);
		expect(status.stdout).toStartWith("Service:    not installed (systemd)");
		const uninstall = await chopin(["service", "uninstall"], env);
		expect(uninstall).toEqual({
			code: 0,
			stdout: "",
			stderr: "The chopin service is not installed: there is nothing to remove.\n",
		});
		expect(existsSync(join(root, "home", ".config", "systemd"))).toBe(false);
	}, 30_000);

	test("status, paired with no daemon, exits 4; the token is in no output and no log", async () => {
		const { env, root } = home();
		const paths = resolvePaths({
			env,
			platform: "linux",
			cwd: root,
			defaults: { data: "/x", config: "/y", cache: "/z" },
		});
		// Nothing listens at the stored server: status's question to it is refused at once, on loopback.
		const server = closedOrigin();
		saveCredential({ paths, platform: "linux", secrets: new Secrets() }, sampleCredential({ server }));
		const human = await chopin(["status"], env);
		const json = await chopin(["status", "--json"], env);
		expect(human.code).toBe(4);
		expect(json.code).toBe(4);
		expect(human.stdout).toContain("Paired:     yes");
		expect(JSON.parse(json.stdout).credential.machineId).toBe("mch_123");
		expect(human.stderr).toBe(
			"error: This machine is paired, but no chopin daemon is running.\nhint: Start it with `chopin run` or `chopin service install`.\n",
		);
		for (const output of [human.stdout, human.stderr, json.stdout, json.stderr])
			expect(output).not.toContain(TOKEN);
		const logs = join(root, "state", "logs");
		for (const name of readdirSync(logs)) expect(readFileSync(join(logs, name), "utf8")).not.toContain(TOKEN);
	}, 30_000);

	test("an unexpected failure: exit 1, a pointer to the log, and the stack in the log", async () => {
		const { env, root } = home();
		// A directory where the credential file should be makes reading it fail in an unplanned way.
		mkdirSync(join(root, "state", "credential.json"), { recursive: true });
		const result = await chopin(["status"], env);
		expect(result.code).toBe(1);
		const logFile = join(root, "state", "logs", "chopin.log");
		expect(result.stderr).toMatch(
			/^error: .+\nhint: This is a bug in chopin; .+chopin\.log has the details\.\n$/,
		);
		const log = readFileSync(logFile, "utf8");
		expect(log).toContain("command failed unexpectedly");
		expect(log).toContain('"stack"');
	}, 30_000);

	test("Ctrl-C (SIGINT) while following the log exits 130", async () => {
		const { env, root } = home();
		mkdirSync(join(root, "state", "logs"), { recursive: true });
		writeFileSync(
			join(root, "state", "logs", "chopin.log"),
			`${JSON.stringify({ level: 30, msg: "ready" })}\n`,
		);
		const child = Bun.spawn([process.execPath, MAIN, "logs", "-f"], {
			env,
			stdout: "pipe",
			stderr: "pipe",
			stdin: "ignore",
		});
		const reader = child.stdout.getReader();
		const { value } = await reader.read(); // the first line: it is following now
		expect(new TextDecoder().decode(value)).toContain("ready");
		reader.releaseLock();
		child.kill("SIGINT");
		expect(await child.exited).toBe(130);
		expect(await new Response(child.stderr).text()).toBe("error: Stopped following the log.\n");
	}, 30_000);
});
