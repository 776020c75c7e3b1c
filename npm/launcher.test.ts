// The npm launcher for real: pack-npm's packages packed with `npm pack`, installed globally into temp prefixes from the
// tarballs (offline), with and without install scripts, and run under Node without Bun, on Linux, macOS and Windows
// (npm's layout and shims for each: scripts/testing/npm-global.ts). The signal cases are POSIX-only.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
	chmodSync,
	cpSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	realpathSync,
	rmSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import cliPackage from "../apps/cli/package.json" with { type: "json" };
import { isGone, readProcess } from "../apps/cli/src/processes/process-table";
import { makeCliHome, pairHome, startMachineServer } from "../apps/cli/src/testing/machine-server";
import type { PackResult } from "../scripts/pack-npm";
import { TARGETS } from "../scripts/release/targets";
import { type CompiledCli, run } from "../scripts/testing/compiled-cli";
import { type NpmGlobalLayout, platformEnv, searchPath } from "../scripts/testing/npm-global";
import {
	findNpm,
	INSTALL_TIMEOUT_MS,
	installLauncher,
	type LauncherInstalls,
	launcherBin,
	runCommand,
} from "./testing/global-installs";

const windows = process.platform === "win32";
const node = Bun.which("node");
const npm = findNpm();
const REQUIRE_ALL = process.env.CHOPIN_TEST_REQUIRE_ALL === "1";
if ((!node || !npm) && !REQUIRE_ALL)
	console.warn("note: Node.js or npm is not installed; the npm launcher tests are skipped.");
/** Why the signal cases are skipped on Windows (the shim's Windows branch only ignores Ctrl-C and passes TERM/HUP on). */
const NO_POSIX_SIGNALS =
	"Windows has no POSIX signals, process groups, /proc or parent-death signal: Ctrl-C reaches every process on the " +
	"console, and taskkill /T ends the launcher's whole tree";
if (windows) console.warn(`note: the launcher's signal cases are skipped: ${NO_POSIX_SIGNALS}.`);
/** The signal cases: Linux and macOS. */
const posixOnly = test.skipIf(windows);

let installed: LauncherInstalls | undefined;
let root: string;
let cli: CompiledCli;
let packed: PackResult;
let shim: NpmGlobalLayout;
let direct: NpmGlobalLayout;
let alone: NpmGlobalLayout;
/** What a user runs after the --ignore-scripts install: <prefix>/bin/chopin, or <prefix>\\chopin.cmd. */
let chopin: string;
let tarballs: readonly string[];
let installOutput: string;
let nodeOnlyPath: string;

beforeAll(async () => {
	if (!node || !npm) return;
	installed = await installLauncher({ node, npm });
	({ root, cli, packed, shim, direct, alone, tarballs, installOutput, nodeOnlyPath } = installed);
	chopin = shim.command;
}, INSTALL_TIMEOUT_MS);

afterAll(() => installed?.remove());

/** chopin's state and config in the test's dir, and Node (no Bun) on PATH. */
function env(): Record<string, string> {
	return {
		...platformEnv(),
		PATH: nodeOnlyPath,
		HOME: join(root, "home"),
		CHOPIN_STATE_DIR: join(root, "state"),
		CHOPIN_CONFIG_DIR: join(root, "config"),
	};
}

/** The file's first bytes: a native binary's magic, or the shim's `#!`. */
function firstBytes(path: string, n = 4): string {
	return readFileSync(path).subarray(0, n).toString("latin1");
}

/** The launcher's one child (the chopin binary), read from /proc. */
function childOf(pid: number): number {
	const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(" ");
	expect(children).toHaveLength(1);
	return Number(children[0]);
}

/** Waits, as long as the test may, until the process is gone (a zombie counts: PID 1 here may not reap). */
async function gone(pid: number): Promise<void> {
	for (;;) {
		const info = readProcess(pid);
		if (!info || isGone(info.state)) return;
		await Bun.sleep(20);
	}
}

describe.skipIf((!node || !npm) && !REQUIRE_ALL)("the @chopin/cli launcher, installed by npm", () => {
	test("pack-npm made one package per binary and a launcher that names all five at this version", () => {
		const manifest = JSON.parse(readFileSync(join(packed.launcherDir, "package.json"), "utf8"));
		expect(manifest).toMatchObject({
			name: "@chopin/cli",
			version: cliPackage.version,
			bin: { chopin: "bin/chopin" },
			scripts: { postinstall: "node install.js" },
			files: ["bin/chopin", "install.js", "README.md"],
			engines: { node: ">=18" },
		});
		expect(manifest.optionalDependencies).toEqual(
			Object.fromEntries(TARGETS.map((t) => [t.npmPackage, cliPackage.version])),
		);
		const platform = JSON.parse(readFileSync(join(packed.platformDirs[0]!.dir, "package.json"), "utf8"));
		expect(platform).toMatchObject({
			name: cli.target.npmPackage,
			version: cliPackage.version,
			os: [cli.target.node.platform],
			cpu: [cli.target.node.arch],
		});
		expect(platform.libc).toEqual(cli.target.node.platform === "linux" ? ["glibc"] : undefined);
		expect(packed.platformDirs.map((p) => p.target)).toEqual([cli.target]);
	});

	test("without install scripts, bin/chopin is the JS shim, which runs under Node with no Bun on PATH", async () => {
		// npm's command for it: a symlink to bin/chopin, or on Windows the .cmd, .ps1 and sh shims in the prefix.
		for (const file of shim.shims) expect({ file, exists: existsSync(file) }).toEqual({ file, exists: true });
		if (!windows) expect(realpathSync(chopin)).toBe(realpathSync(launcherBin(shim)));
		expect(firstBytes(launcherBin(shim), 2)).toBe("#!");
		expect(Bun.which("bun", { PATH: nodeOnlyPath })).toBeNull();
		const result = await runCommand(chopin, ["--version"], { env: env() });
		expect(result).toEqual({ stdout: `${cliPackage.version}\n`, stderr: "", code: 0, signal: null });
	});

	test.skipIf(windows)(
		"with install scripts, bin/chopin is the binary itself (a hard link of the platform package's), run without Node",
		async () => {
			expect(installOutput).toContain("@chopin/cli: bin/chopin is the binary");
			const file = realpathSync(direct.command);
			expect(file).toBe(realpathSync(launcherBin(direct)));
			expect(firstBytes(file)).toBe(process.platform === "darwin" ? firstBytes(cli.binary) : "\x7fELF");
			const platformBinary = join(direct.packageDir(cli.target.npmPackage), "bin", "chopin");
			expect(statSync(file).ino).toBe(statSync(platformBinary).ino);
			expect(statSync(file).mode & 0o777).toBe(0o755);
			// No Node on PATH at all: nothing but the binary runs.
			const result = await run([direct.command, "--version"], { env: { ...env(), PATH: "/nonexistent" } });
			expect(result).toEqual({ stdout: `${cliPackage.version}\n`, stderr: "", code: 0, signal: null });
			const status = await run([direct.command, "status", "--json"], { env: env() });
			expect(status.code).toBe(3);
			expect(JSON.parse(status.stdout)).toMatchObject({ installMethod: "npm", version: cliPackage.version });
			// Nothing left beside it.
			expect(readdirSync(join(direct.packageDir("@chopin/cli"), "bin"))).toEqual(["chopin"]);
		},
	);

	test.skipIf(!windows)(
		"with install scripts on Windows, install.js keeps the JS shim and says so, and the install succeeds",
		async () => {
			expect(installOutput).toContain("@chopin/cli: kept the JS shim (Windows)");
			for (const file of direct.shims)
				expect({ file, exists: existsSync(file) }).toEqual({ file, exists: true });
			expect(firstBytes(launcherBin(direct), 2)).toBe("#!");
			expect(readdirSync(join(direct.packageDir("@chopin/cli"), "bin"))).toEqual(["chopin"]);
			const result = await runCommand(direct.command, ["--version"], { env: env() });
			expect(result).toEqual({ stdout: `${cliPackage.version}\n`, stderr: "", code: 0, signal: null });
			const status = await runCommand(direct.command, ["status", "--json"], { env: env() });
			expect(status.code).toBe(3);
			expect(JSON.parse(status.stdout)).toMatchObject({ installMethod: "npm", version: cliPackage.version });
		},
	);

	test.skipIf(windows)(
		"npm's Windows shims, written here (npm's bin-links told the platform is win32), start bin/chopin with node",
		async () => {
			const prefix = join(root, "win32-shims");
			await installed!.npm(["install", "-g", "--prefix", prefix, "--ignore-scripts", ...tarballs], {
				__TESTING_BIN_LINKS_PLATFORM__: "win32",
			});
			// Beside node_modules, as in a Windows prefix (bin-links puts them in node_modules' parent: here <prefix>/lib).
			const [sh, cmd, ps1] = ["chopin", "chopin.cmd", "chopin.ps1"].map((name) => join(prefix, "lib", name));
			// By bin/chopin's #! line (it has no extension that could say otherwise): node, from PATH.
			expect(readFileSync(cmd!, "utf8")).toContain(
				'"%_prog%"  "%dp0%\\node_modules\\@chopin\\cli\\bin\\chopin" %*',
			);
			expect(readFileSync(cmd!, "utf8")).toContain('SET "_prog=node"');
			expect(readFileSync(ps1!, "utf8")).toContain(
				'& "node$exe"  "$basedir/node_modules/@chopin/cli/bin/chopin" $args',
			);
			// Git Bash's: runnable here (it needs sh's tools on PATH).
			const shEnv = { ...env(), PATH: `${nodeOnlyPath}:/usr/bin:/bin` };
			const result = await run([sh!, "--version"], { env: shEnv });
			expect(result).toEqual({ stdout: `${cliPackage.version}\n`, stderr: "", code: 0, signal: null });
			expect((await run([sh!, "status", "--json"], { env: shEnv })).code).toBe(3);
		},
		60_000,
	);

	/** @chopin/cli and its platform package laid out as npm does, the platform package in `platformRoot`. */
	function unpacked(platformRoot: string) {
		const dir = mkdtempSync(join(root, "layout-"));
		const scope = join(dir, "node_modules", "@chopin");
		mkdirSync(scope, { recursive: true });
		const launcher = join(scope, "cli");
		cpSync(packed.launcherDir, launcher, { recursive: true });
		const platformDir = packed.platformDirs[0]!.dir;
		const platform = join(platformRoot, basename(platformDir));
		cpSync(platformDir, platform, { recursive: true });
		// A junction on Windows, which needs no privilege; the type is ignored elsewhere.
		if (platform !== join(scope, basename(platformDir)))
			symlinkSync(platform, join(scope, basename(platformDir)), "junction");
		const installJs = (agent = "npm/11.0.0 node/v20.20.2 linux x64") =>
			run([node!, "install.js"], {
				cwd: launcher,
				env: { ...platformEnv(), PATH: nodeOnlyPath, HOME: join(root, "home"), npm_config_user_agent: agent },
			});
		return {
			launcher,
			shim: join(launcher, "bin", "chopin"),
			binary: join(platform, "bin", cli.target.npmBinary),
			installJs,
		};
	}

	test.skipIf(
		process.platform !== "linux" ||
			!existsSync("/dev/shm") ||
			statSync("/dev/shm").dev === statSync(tmpdir()).dev,
	)(
		"install.js copies the binary where a hard link cannot be made (the package on another file system)",
		async () => {
			const elsewhere = mkdtempSync(join("/dev/shm", "chopin-npm-"));
			try {
				const { shim, binary, installJs } = unpacked(elsewhere);
				const result = await installJs();
				expect(result).toMatchObject({ code: 0, stderr: "@chopin/cli: bin/chopin is the binary\n" });
				expect(statSync(shim).ino).not.toBe(statSync(binary).ino);
				expect(statSync(shim).size).toBe(statSync(binary).size);
				expect(statSync(shim).mode & 0o777).toBe(0o755);
				expect((await run([shim, "--version"], { env: { PATH: "/nonexistent" } })).stdout).toBe(
					`${cliPackage.version}\n`,
				);
			} finally {
				rmSync(elsewhere, { recursive: true, force: true });
			}
		},
	);

	test.skipIf(windows)(
		"install.js keeps the shim for a binary that answers another version, and under pnpm and yarn",
		async () => {
			const { launcher, shim, binary, installJs } = unpacked(join(root, "unused"));
			const shimText = readFileSync(shim, "utf8");
			// Not chopin at all: a program that prints another version.
			writeFileSync(binary, "#!/bin/sh\necho 9.9.9\n");
			chmodSync(binary, 0o755);
			expect((await installJs()).stderr).toBe(
				`@chopin/cli: kept the JS shim (the binary answered 9.9.9, not ${cliPackage.version})\n`,
			);
			expect(await installJs("pnpm/9.15.0 npm/? node/v20.20.2 linux x64")).toMatchObject({
				code: 0,
				stderr: "@chopin/cli: kept the JS shim (pnpm)\n",
			});
			expect((await installJs("yarn/1.22.22 npm/? node/v20.20.2 linux x64")).stderr).toBe(
				"@chopin/cli: kept the JS shim (yarn)\n",
			);
			expect(readFileSync(shim, "utf8")).toBe(shimText);
			// Nothing left beside it.
			expect(readdirSync(join(launcher, "bin"))).toEqual(["chopin"]);
		},
	);

	test.skipIf(!windows)(
		"on Windows install.js keeps the shim whoever installs: npm, pnpm and yarn",
		async () => {
			const { launcher, shim, installJs } = unpacked(join(root, "unused"));
			const shimText = readFileSync(shim, "utf8");
			for (const manager of ["npm/11.0.0", "pnpm/9.15.0 npm/?", "yarn/1.22.22 npm/?"]) {
				expect(await installJs(`${manager} node/v20.20.2 win32 x64`)).toMatchObject({
					code: 0,
					stderr: "@chopin/cli: kept the JS shim (Windows)\n",
				});
			}
			expect(readFileSync(shim, "utf8")).toBe(shimText);
			expect(readdirSync(join(launcher, "bin"))).toEqual(["chopin"]);
		},
	);

	test("passes exit codes through, and the CLI knows it came from npm", async () => {
		const status = await runCommand(chopin, ["status", "--json"], { env: env() });
		expect(status.code).toBe(3);
		expect(JSON.parse(status.stdout)).toMatchObject({ installMethod: "npm", version: cliPackage.version });
		const usage = await runCommand(chopin, ["connect", "gemini", "--acp"], { env: env() });
		expect(usage.code).toBe(2);
		expect(usage.stderr).toContain("error: Unknown option '--acp'.");
	});

	/** Starts `chopin logs -f` through the launcher and waits until chopin has printed the log's line. */
	async function following(options: { detached?: boolean } = {}) {
		const logs = join(root, "state", "logs");
		mkdirSync(logs, { recursive: true });
		writeFileSync(
			join(logs, "chopin.log"),
			`${JSON.stringify({ level: 30, time: "2026-01-01T00:00:00.000Z", msg: "hello" })}\n`,
		);
		const child = Bun.spawn([chopin, "logs", "-f"], {
			env: env(),
			// A core dump (SIGQUIT) lands in the temp dir, if anywhere.
			cwd: root,
			stdin: "ignore",
			stdout: "pipe",
			stderr: "pipe",
			detached: options.detached ?? false,
		});
		const reader = child.stdout.getReader();
		const first = await reader.read();
		// chopin printed, so the launcher has long finished setting up its signal handlers, and chopin its relay.
		expect(new TextDecoder().decode(first.value)).toContain("hello");
		reader.releaseLock();
		return child;
	}

	for (const signal of ["SIGINT", "SIGTERM"] as const)
		posixOnly(
			`a ${signal} to the launcher alone reaches chopin, which stops gracefully and exits 130`,
			async () => {
				const child = await following();
				child.kill(signal);
				expect(await child.exited).toBe(130);
				expect(await new Response(child.stderr).text()).toBe("error: Stopped following the log.\n");
			},
		);

	// Those chopin does not handle: it dies of them (SIGPIPE, which Bun ignores, is passed on too, to no effect).
	for (const signal of ["SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGXCPU"] as const)
		test.skipIf(process.platform !== "linux")(
			`a ${signal} to the launcher alone reaches chopin, which dies of it, and the launcher dies of it too`,
			async () => {
				const child = await following();
				const binary = childOf(child.pid);
				child.kill(signal);
				await child.exited;
				expect(child.signalCode).toBe(signal);
				await gone(binary);
			},
		);

	// Both the launcher and chopin get it (as from a terminal's Ctrl-C, or a stop of the whole group or cgroup). That
	// it is one interrupt shows with the daemon below, whose second one would exit 130 at once.
	for (const signal of ["SIGINT", "SIGTERM"] as const)
		posixOnly(`a ${signal} to the whole process group stops chopin gracefully, with 130`, async () => {
			const child = await following({ detached: true });
			process.kill(-child.pid, signal);
			expect(await child.exited).toBe(130);
			expect(await new Response(child.stderr).text()).toBe("error: Stopped following the log.\n");
		});

	test.skipIf(process.platform !== "linux")(
		"a chopin killed by a signal takes the launcher down the same way",
		async () => {
			const child = await following();
			process.kill(childOf(child.pid), "SIGKILL");
			await child.exited;
			expect(child.signalCode).toBe("SIGKILL");
		},
	);

	test.skipIf(process.platform !== "linux")(
		"a launcher killed with SIGKILL takes chopin with it: no orphan is left",
		async () => {
			const child = await following();
			const binary = childOf(child.pid);
			expect(readProcess(binary)?.ppid).toBe(child.pid);
			child.kill("SIGKILL");
			await child.exited;
			// The parent-death signal is SIGTERM: chopin stops as it does on Ctrl-C, and says so.
			await gone(binary);
			expect(await new Response(child.stderr).text()).toBe("error: Stopped following the log.\n");
		},
	);

	/**
	 * `chopin connect` through the shim on a paired home: chopin becomes the daemon (in the same process: an execve
	 * would cut the relay) and connects to a real local server. Resolves once it said so, with the shim and the daemon.
	 */
	async function daemonThroughShim(options: { detached: boolean }) {
		const machines = await startMachineServer();
		const home = await makeCliHome();
		await pairHome(machines, home);
		const shim = Bun.spawn([chopin, "connect", home.checkout], {
			env: home.env,
			cwd: home.root,
			stdin: "ignore",
			stdout: "ignore",
			stderr: "pipe",
			detached: options.detached,
		});
		const reader = shim.stderr.getReader();
		let stderr = "";
		while (!/Connected to \S+ as ana's machine/.test(stderr)) {
			const chunk = await reader.read();
			if (chunk.done) throw new Error(`the daemon ended before connecting:\n${stderr}`);
			stderr += new TextDecoder().decode(chunk.value);
		}
		const daemon = childOf(shim.pid);
		expect(readFileSync(`/proc/${daemon}/cmdline`, "utf8").split("\0")).toContain("connect");
		const cleanUp = async () => {
			// After a failure: the shim's SIGKILL takes the daemon with it (tested above), so nothing outlives the test.
			if (shim.exitCode === null && shim.signalCode === null) shim.kill("SIGKILL");
			await shim.exited;
			await gone(daemon);
			reader.releaseLock();
			await machines.server.close();
			rmSync(home.root, { recursive: true, force: true });
		};
		return { shim, daemon, cleanUp };
	}

	test.skipIf(process.platform !== "linux")(
		"`chopin connect` as the daemon: a SIGINT to the shim alone reaches it, one interrupt, a graceful stop (exit 0)",
		async () => {
			const { shim, daemon, cleanUp } = await daemonThroughShim({ detached: false });
			try {
				shim.kill("SIGINT");
				// One interrupt: the daemon's graceful stop ends with 0 (a second one would have exited 130 at once).
				expect(await shim.exited).toBe(0);
				await gone(daemon);
			} finally {
				await cleanUp();
			}
		},
		60_000,
	);

	test.skipIf(process.platform !== "linux")(
		"Ctrl-C to the daemon's whole process group is one interrupt: a graceful stop, exit 0",
		async () => {
			const { shim, daemon, cleanUp } = await daemonThroughShim({ detached: true });
			try {
				process.kill(-shim.pid, "SIGINT");
				expect(await shim.exited).toBe(0);
				await gone(daemon);
			} finally {
				await cleanUp();
			}
		},
		60_000,
	);

	test("a `bun add -g` install knows it came from bun, so its upgrade is bun's", async () => {
		const bunHome = join(root, "bun-home");
		const added = await run([process.execPath, "add", "-g", ...tarballs], {
			cwd: root,
			env: {
				...platformEnv(),
				PATH: searchPath(),
				HOME: bunHome,
				BUN_INSTALL: bunHome,
				BUN_INSTALL_CACHE_DIR: join(bunHome, "cache"),
				// Offline: the other platforms' packages are optional, and nobody answers here.
				NPM_CONFIG_REGISTRY: "http://127.0.0.1:9/",
			},
		});
		expect({ code: added.code, stderr: added.code === 0 ? "" : added.stderr }).toEqual({
			code: 0,
			stderr: "",
		});
		// bun's global bin: a symlink, or on Windows its own chopin.exe shim (beside chopin.bunx), which starts node.
		const command = join(bunHome, "bin", windows ? "chopin.exe" : "chopin");
		const status = await run([command, "status", "--json"], { env: env() });
		expect(status.code).toBe(3);
		expect(JSON.parse(status.stdout)).toMatchObject({ installMethod: "bun" });
	});

	test("without the platform package: a clear error naming the package to install", async () => {
		expect(existsSync(alone.packageDir("@chopin/cli"))).toBe(true);
		expect(existsSync(alone.packageDir(cli.target.npmPackage))).toBe(false);
		const result = await runCommand(alone.command, ["--version"], { env: env() });
		const platform = `${cli.target.node.platform}-${cli.target.node.arch}`;
		expect(result.code).toBe(1);
		expect(result.stdout).toBe("");
		expect(result.stderr).toBe(
			`error: The chopin binary for ${platform} is missing: the package ${cli.target.npmPackage} is not installed.\n` +
				"hint: npm installs it as an optional dependency of @chopin/cli, so an install with --no-optional or " +
				`--omit=optional leaves it out. Reinstall without that option (npm install -g @chopin/cli@${cliPackage.version}), ` +
				`or add it yourself: npm install -g ${cli.target.npmPackage}@${cliPackage.version}\n`,
		);
	});
});
