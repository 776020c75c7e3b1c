import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import cliPackage from "../apps/cli/package.json" with { type: "json" };
import { resolvePaths } from "../apps/cli/src/local/paths";
import { Secrets } from "../apps/cli/src/local/secrets";
import { saveCredential } from "../apps/cli/src/machine/credential";
import { closedOrigin } from "../apps/cli/src/testing/closed-port";
import { sampleCredential } from "../apps/cli/src/testing/credential";
import { sampleDaemonStatus } from "../apps/cli/src/testing/daemon-status";
import { connectStdioMcp } from "../apps/cli/src/testing/mcp-stdio";
import { claim, readRun, setupBuilds, startRun } from "../apps/server/src/testing/builds";
import { ManualClock } from "../packages/agent-link/src/clock";
import { COMPILE_FLAGS, parseBuildArgs } from "./build-cli";
import { formatSums, parseSums, sha256File } from "./release/sha256";
import { hostTarget, TARGETS } from "./release/targets";
import { COMPILE_TIMEOUT_MS, type CompiledCli, compileCli, run } from "./testing/compiled-cli";

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
	const dir = mkdtempSync(join(tmpdir(), "chopin-build-test-"));
	dirs.push(dir);
	return dir;
}

/** An environment that keeps chopin's state, config and home inside `root`. */
function isolatedEnv(root: string): Record<string, string> {
	return {
		PATH: process.env.PATH ?? "",
		HOME: join(root, "home"),
		CHOPIN_STATE_DIR: join(root, "state"),
		CHOPIN_CONFIG_DIR: join(root, "config"),
	};
}

describe("the compiled chopin binary", () => {
	let cli: CompiledCli;
	beforeAll(async () => {
		cli = await compileCli();
	}, COMPILE_TIMEOUT_MS);
	afterAll(() => cli?.remove());

	test("is built with the release flags, for this machine's target", () => {
		expect(COMPILE_FLAGS).toEqual(["--compile", "--minify", "--bytecode", "--format=esm", "--splitting"]);
		expect(cli.target).toBe(hostTarget()!);
		expect(cli.binary).toEndWith(`/${cli.target.asset}`);
		expect(cli.version).toBe(cliPackage.version);
	});

	test("--version prints apps/cli/package.json's version", async () => {
		const root = tempDir();
		expect(await run([cli.binary, "--version"], { env: isolatedEnv(root) })).toEqual({
			stdout: `${cliPackage.version}\n`,
			stderr: "",
			code: 0,
			signal: null,
		});
		expect(await run([cli.binary, "-V"], { env: isolatedEnv(root) })).toMatchObject({ code: 0 });
	});

	test("--help lists the commands and exits 0", async () => {
		const result = await run([cli.binary, "--help"], { env: isolatedEnv(tempDir()) });
		expect(result.code).toBe(0);
		expect(result.stdout).toStartWith("Usage: chopin [options] [command]");
		for (const command of ["connect", "run", "status", "disconnect", "logs", "service"]) {
			expect(result.stdout).toContain(`  ${command}`);
		}
		const sub = await run([cli.binary, "status", "--help"], { env: isolatedEnv(tempDir()) });
		expect(sub.code).toBe(0);
		expect(sub.stdout).toContain("--json");
	});

	test("status --json from a temp dir: not paired (exit 3), installed as `binary`", async () => {
		const root = tempDir();
		const dir = join(root, "downloads");
		mkdirSync(dir);
		const binary = join(dir, "chopin");
		copyFileSync(cli.binary, binary);
		const result = await run([binary, "status", "--json"], { env: isolatedEnv(root) });
		expect(result.code).toBe(3);
		const report = JSON.parse(result.stdout);
		expect(report).toMatchObject({
			version: cliPackage.version,
			installMethod: "binary",
			credential: { stored: false },
			daemon: { running: false },
			logFile: join(root, "state", "logs", "chopin.log"),
		});
		expect(result.stderr).toContain("error: This machine is not paired with a Chopin server.");
	});

	test("status --json from <HOME>/.chopin/bin: installed as `script`", async () => {
		const root = tempDir();
		const bin = join(root, "home", ".chopin", "bin");
		mkdirSync(bin, { recursive: true });
		copyFileSync(cli.binary, join(bin, "chopin"));
		const result = await run([join(bin, "chopin"), "status", "--json"], { env: isolatedEnv(root) });
		expect(result.code).toBe(3);
		expect(JSON.parse(result.stdout).installMethod).toBe("script");
	});

	test("status in the binary: the full checks load when a file or an answer needs them, and the record is used after", async () => {
		const root = tempDir();
		const env = isolatedEnv(root);
		const paths = resolvePaths({
			env,
			platform: "linux",
			cwd: root,
			defaults: { data: "/x", config: "/y", cache: "/z" },
		});
		const server = closedOrigin();
		saveCredential({ paths, platform: "linux", secrets: new Secrets() }, sampleCredential({ server }));
		mkdirSync(paths.configDir, { recursive: true });
		// By hand, a default left out: never recorded, so checked in full (zod, required when needed) every time.
		writeFileSync(paths.machineConfigFile, JSON.stringify({ version: 1, server, label: "laptop" }));
		const first = await run([cli.binary, "status", "--json"], { env });
		expect(first.code).toBe(4);
		expect(JSON.parse(first.stdout)).toMatchObject({
			credential: { stored: true, valid: true, server },
			config: { configured: true, label: "laptop" },
			daemon: { running: false },
		});
		expect(Object.keys(JSON.parse(readFileSync(paths.checkedFile, "utf8")).files)).toEqual([
			paths.credentialFile,
		]);
		// The credential now comes from the record; the output is the same.
		expect(await run([cli.binary, "status", "--json"], { env })).toEqual(first);

		writeFileSync(paths.machineConfigFile, JSON.stringify({ version: 2 }));
		const damaged = JSON.parse((await run([cli.binary, "status", "--json"], { env })).stdout);
		expect(damaged.config.problem).toContain("is not in the expected form");

		// A daemon of another version: its answer is checked in full, and a restart is pending.
		const answer = { type: "status", status: sampleDaemonStatus({ version: "0.0.9", server }) };
		const listener = Bun.listen({
			unix: paths.socket,
			socket: { data: (socket) => void socket.write(`${JSON.stringify(answer)}\n`) },
		});
		try {
			const report = JSON.parse((await run([cli.binary, "status", "--json"], { env })).stdout);
			expect(report.daemon).toMatchObject({ running: true, version: "0.0.9", restartPending: true });
			expect(report.account).toEqual({ login: "ana", source: "daemon", problem: null });
		} finally {
			listener.stop(true);
		}
	});

	test("writes its log in the binary (pino with no transports) and reads it back with `logs`", async () => {
		const root = tempDir();
		const env = { ...isolatedEnv(root), CHOPIN_LOG_LEVEL: "debug" };
		expect((await run([cli.binary, "status", "--json"], { env })).code).toBe(3);
		const line = JSON.parse(
			readFileSync(join(root, "state", "logs", "chopin.log"), "utf8")
				.trim()
				.split("\n")[0]!,
		);
		expect(line).toMatchObject({ level: 20, msg: "status gathered", paired: false });
		const logs = await run([cli.binary, "logs", "-n", "5"], { env });
		expect(logs.code).toBe(0);
		expect(logs.stdout).toContain("DEBUG status gathered paired=false");
	});

	/**
	 * The daemon's containment set-up in the binary: bubblewrap's probe, and prctl through bun:ffi
	 * (libc.so.6) when asked for the subreaper. Its log line says what it chose and why; "worked"
	 * means the kernel then answered PR_GET_CHILD_SUBREAPER with 1 inside the binary.
	 */
	test.skipIf(process.platform !== "linux")(
		"the daemon sets up its containment in the binary: the subreaper through bun:ffi, the PID namespace",
		async () => {
			const server = closedOrigin();
			const cases = [
				{
					env: { CHOPIN_CONTAINMENT: "subreaper" },
					expected: {
						containment: "subreaper",
						reason: "CHOPIN_CONTAINMENT asked for subreaper; prctl(PR_SET_CHILD_SUBREAPER) worked",
					},
				},
				...(Bun.which("bwrap") ? [{ env: {}, expected: { containment: "pid-namespace" } }] : []),
			];
			for (const { env: extra, expected } of cases) {
				const root = tempDir();
				const env = { ...isolatedEnv(root), ...extra };
				const paths = resolvePaths({
					env,
					platform: "linux",
					cwd: root,
					defaults: { data: "/x", config: "/y", cache: "/z" },
				});
				saveCredential({ paths, platform: "linux", secrets: new Secrets() }, sampleCredential({ server }));
				const daemon = Bun.spawn([cli.binary, "run"], {
					env,
					stdin: "ignore",
					stdout: "ignore",
					stderr: "pipe",
				});
				try {
					let line: Record<string, unknown> | undefined;
					for (let i = 0; i < 1000 && !line; i++) {
						await Bun.sleep(10);
						line = logLines(paths.logFile).find((l) => l.containment);
					}
					expect(line).toMatchObject(expected);
				} finally {
					daemon.kill("SIGTERM");
				}
				expect(await daemon.exited).toBe(0);
			}
		},
	);

	test("`chopin bridge` in the binary serves Chopin's MCP tools on stdio with a run's credential", async () => {
		const s = await setupBuilds(new ManualClock(Date.now()));
		try {
			const { build } = await startRun(s);
			const token = await claim(s.machine, build.id);
			const root = tempDir();
			const mcp = await connectStdioMcp(cli.binary, ["bridge"], {
				...isolatedEnv(root),
				CHOPIN_URL: s.server.url,
				CHOPIN_RUN_TOKEN: token,
			});
			try {
				expect(await mcp.toolNames()).toEqual([
					"invoke_planner",
					"read_brief",
					"report_blocker",
					"report_progress",
					"report_pull_request",
					"report_result",
				]);
				const brief = await mcp.call("read_brief");
				expect(JSON.parse(brief.text)).toMatchObject({ run: { id: build.id }, brief: "Do step one." });
				expect(await mcp.call("report_progress", { stage: "Bridged", status: "completed" })).toMatchObject({
					isError: false,
				});
				expect((await readRun(s, build.id)).stages).toContainEqual(
					expect.objectContaining({ name: "Bridged", status: "completed" }),
				);
			} finally {
				await mcp.close();
			}
			// Without its two variables it says what it needs, and exits 2.
			const bare = await run([cli.binary, "bridge"], { env: isolatedEnv(root) });
			expect(bare).toMatchObject({ code: 2 });
			expect(bare.stderr).toContain(
				"`chopin bridge` needs CHOPIN_URL and CHOPIN_RUN_TOKEN in its environment.",
			);
		} finally {
			await s.close();
		}
	}, 30_000);

	test("a usage error keeps its exit status in the binary", async () => {
		const result = await run([cli.binary, "connect", "gemini", "--acp"], { env: isolatedEnv(tempDir()) });
		expect(result.code).toBe(2);
		expect(result.stderr).toContain("error: Unknown option '--acp'.");
	});

	test("the release directory's SHA256SUMS covers the binary and both installers", async () => {
		const sums = parseSums(readFileSync(join(cli.dir, "SHA256SUMS"), "utf8"));
		expect([...sums.keys()]).toEqual([cli.target.asset, "install.ps1", "install.sh"].sort());
		expect(sums.get(cli.target.asset)).toBe(await sha256File(cli.binary));
		expect(sums.get(cli.target.asset)).toBe(cli.build.binaries[0]!.sha256);
		expect(readFileSync(join(cli.dir, "install.sh"), "utf8")).toBe(
			readFileSync(join(import.meta.dir, "..", "installers", "install.sh"), "utf8"),
		);
		// The file is in the format the real tool checks.
		if (Bun.which("sha256sum")) {
			const check = await run(["sha256sum", "-c", "SHA256SUMS"], { cwd: cli.dir });
			expect(check.code).toBe(0);
			expect(check.stdout).toContain(`${cli.target.asset}: OK`);
		}
	});
});

describe("targets and arguments", () => {
	test("five targets, named for Bun, the release assets and npm", () => {
		expect(TARGETS.map((t) => [t.bun, t.asset, t.npmPackage, t.npmBinary])).toEqual([
			["bun-linux-x64", "chopin-linux-x64", "@chopin/cli-linux-x64", "chopin"],
			["bun-linux-arm64", "chopin-linux-arm64", "@chopin/cli-linux-arm64", "chopin"],
			["bun-darwin-x64", "chopin-darwin-x64", "@chopin/cli-darwin-x64", "chopin"],
			["bun-darwin-arm64", "chopin-darwin-arm64", "@chopin/cli-darwin-arm64", "chopin"],
			["bun-windows-x64", "chopin-windows-x64.exe", "@chopin/cli-win32-x64", "chopin.exe"],
		]);
		expect(hostTarget("win32", "x64")?.name).toBe("windows-x64");
		expect(hostTarget("linux", "ia32")).toBeUndefined();
	});

	test("no arguments: this machine's target; --all: the five; names: those", () => {
		expect(parseBuildArgs([]).targets).toEqual([hostTarget()!]);
		expect(parseBuildArgs(["--all"]).targets).toEqual([...TARGETS]);
		expect(parseBuildArgs(["darwin-arm64", "windows-x64", "darwin-arm64", "--out", "/x"])).toEqual({
			targets: [TARGETS[3]!, TARGETS[4]!],
			outDir: "/x",
		});
		expect(() => parseBuildArgs(["linux-ia32"])).toThrow("unknown target linux-ia32");
		expect(() => parseBuildArgs(["--all", "linux-x64"])).toThrow("either --all or target names");
	});

	test("SHA256SUMS is written sorted, as sha256sum writes it, and read back in either mode", () => {
		const a = "a".repeat(64);
		const b = "b".repeat(64);
		const text = formatSums(
			new Map([
				["install.sh", b],
				["chopin-linux-x64", a],
			]),
		);
		expect(text).toBe(`${a}  chopin-linux-x64\n${b}  install.sh\n`);
		expect(parseSums(`${text}${a} *chopin-windows-x64.exe\n`)).toEqual(
			new Map([
				["chopin-linux-x64", a],
				["install.sh", b],
				["chopin-windows-x64.exe", a],
			]),
		);
		expect(() => parseSums("nonsense\n")).toThrow("not a checksum line");
	});
});

/** The JSON lines of a log file written so far. */
function logLines(file: string): Record<string, unknown>[] {
	let text = "";
	try {
		text = readFileSync(file, "utf8");
	} catch {
		return [];
	}
	return text
		.split("\n")
		.filter((l) => l.trim() !== "")
		.map((l) => JSON.parse(l) as Record<string, unknown>);
}
