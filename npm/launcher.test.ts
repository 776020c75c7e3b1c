// The npm launcher for real: pack-npm's packages packed with `npm pack`, installed globally into temp prefixes from the
// tarballs (offline), with and without install scripts, and run under Node without Bun.
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
import { join } from "node:path";
import cliPackage from "../apps/cli/package.json" with { type: "json" };
import { isGone, readProcess } from "../apps/cli/src/processes/process-table";
import { makeCliHome, pairHome, startMachineServer } from "../apps/cli/src/testing/machine-server";
import { type PackResult, packNpm } from "../scripts/pack-npm";
import { TARGETS } from "../scripts/release/targets";
import { COMPILE_TIMEOUT_MS, type CompiledCli, compileCli, run } from "../scripts/testing/compiled-cli";

const node = Bun.which("node");
const npm = Bun.which("npm");
const REQUIRE_ALL = process.env.CHOPIN_TEST_REQUIRE_ALL === "1";
if ((!node || !npm) && !REQUIRE_ALL)
	console.warn("note: Node.js or npm is not installed; the npm launcher tests are skipped.");

let root: string;
let cli: CompiledCli;
let packed: PackResult;
/** <prefix>/bin/chopin of `npm install -g --ignore-scripts` of the launcher and this machine's platform package: the JS shim. */
let chopin: string;
/** The same installed with install scripts: the binary itself, put there by install.js. */
let chopinDirect: string;
/** The launcher installed without the platform package (as --omit=optional would). */
let chopinAlone: string;
/** The two packages npm packed: the launcher's and this machine's platform package's. */
let tarballs: string[];
/** What install.js printed when npm ran it (--foreground-scripts). */
let installOutput: string;
/** A PATH with node and nothing else: no bun. */
let nodeOnlyPath: string;

/** npm, kept off the network: tarballs only, a fresh cache, a registry nobody answers on. */
async function npmRun(args: string[]) {
	const result = await run([npm!, ...args], {
		cwd: root,
		env: {
			PATH: process.env.PATH ?? "",
			HOME: join(root, "npm-home"),
			npm_config_cache: join(root, "npm-cache"),
			npm_config_userconfig: join(root, "npm-home", ".npmrc"),
			npm_config_registry: "http://127.0.0.1:9/",
			npm_config_offline: "true",
			npm_config_audit: "false",
			npm_config_fund: "false",
			npm_config_update_notifier: "false",
		},
	});
	if (result.code !== 0) throw new Error(`npm ${args.join(" ")} failed (${result.code}):\n${result.stderr}`);
	return result;
}

beforeAll(async () => {
	if (!node || !npm) return;
	root = mkdtempSync(join(tmpdir(), "chopin-npm-"));
	cli = await compileCli();
	packed = await packNpm({ distDir: cli.dir, outDir: join(root, "packages"), log: () => {} });
	const packs = join(root, "packs");
	mkdirSync(packs);
	const platform = packed.platformDirs.find((p) => p.target === cli.target)!;
	await npmRun(["pack", packed.launcherDir, platform.dir, "--pack-destination", packs]);
	// Absolute paths: npm reads `packs/x.tgz` as a GitHub repository.
	const launcherTgz = join(packs, `chopin-cli-${packed.version}.tgz`);
	const platformTgz = join(packs, `chopin-${platform.dir.split("/").at(-1)}-${packed.version}.tgz`);
	const global = (prefix: string, ...args: string[]) =>
		npmRun(["install", "-g", "--prefix", join(root, prefix), "--foreground-scripts", ...args]);
	await global("shim", "--ignore-scripts", launcherTgz, platformTgz);
	installOutput = (await global("direct", launcherTgz, platformTgz)).stderr;
	await global("alone", "--ignore-scripts", launcherTgz);
	tarballs = [launcherTgz, platformTgz];
	chopin = join(root, "shim", "bin", "chopin");
	chopinDirect = join(root, "direct", "bin", "chopin");
	chopinAlone = join(root, "alone", "bin", "chopin");
	nodeOnlyPath = join(root, "node-only");
	mkdirSync(nodeOnlyPath);
	symlinkSync(node, join(nodeOnlyPath, "node"));
}, COMPILE_TIMEOUT_MS + 120_000);

afterAll(() => {
	cli?.remove();
	if (root) rmSync(root, { recursive: true, force: true });
});

/** chopin's state and config in the test's dir, and Node (no Bun) on PATH. */
function env(): Record<string, string> {
	return {
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
		expect(firstBytes(chopin, 2)).toBe("#!");
		expect(Bun.which("bun", { PATH: nodeOnlyPath })).toBeNull();
		const result = await run([chopin, "--version"], { env: env() });
		expect(result).toEqual({ stdout: `${cliPackage.version}\n`, stderr: "", code: 0, signal: null });
	});

	test.skipIf(process.platform === "win32")(
		"with install scripts, bin/chopin is the binary itself (a hard link of the platform package's), run without Node",
		async () => {
			expect(installOutput).toContain("@chopin/cli: bin/chopin is the binary");
			const lib = join(root, "direct", "lib", "node_modules");
			const file = realpathSync(chopinDirect);
			expect(file).toBe(realpathSync(join(lib, "@chopin", "cli", "bin", "chopin")));
			expect(firstBytes(file)).toBe(process.platform === "darwin" ? firstBytes(cli.binary) : "\x7fELF");
			const platformBinary = join(lib, cli.target.npmPackage, "bin", "chopin");
			expect(statSync(file).ino).toBe(statSync(platformBinary).ino);
			expect(statSync(file).mode & 0o777).toBe(0o755);
			// No Node on PATH at all: nothing but the binary runs.
			const result = await run([chopinDirect, "--version"], { env: { ...env(), PATH: "/nonexistent" } });
			expect(result).toEqual({ stdout: `${cliPackage.version}\n`, stderr: "", code: 0, signal: null });
			const status = await run([chopinDirect, "status", "--json"], { env: env() });
			expect(status.code).toBe(3);
			expect(JSON.parse(status.stdout)).toMatchObject({ installMethod: "npm", version: cliPackage.version });
			// Nothing left beside it.
			expect(readdirSync(join(lib, "@chopin", "cli", "bin"))).toEqual(["chopin"]);
		},
	);

	/** @chopin/cli and its platform package laid out as npm does, the platform package in `platformRoot`. */
	function layout(platformRoot: string) {
		const dir = mkdtempSync(join(root, "layout-"));
		const scope = join(dir, "node_modules", "@chopin");
		mkdirSync(scope, { recursive: true });
		const launcher = join(scope, "cli");
		cpSync(packed.launcherDir, launcher, { recursive: true });
		const platformDir = packed.platformDirs[0]!.dir;
		const platform = join(platformRoot, platformDir.split("/").at(-1)!);
		cpSync(platformDir, platform, { recursive: true });
		if (platform !== join(scope, platformDir.split("/").at(-1)!))
			symlinkSync(platform, join(scope, platformDir.split("/").at(-1)!));
		const installJs = (agent = "npm/11.0.0 node/v20.20.2 linux x64") =>
			run([node!, "install.js"], {
				cwd: launcher,
				env: { PATH: nodeOnlyPath, HOME: join(root, "home"), npm_config_user_agent: agent },
			});
		return {
			launcher,
			shim: join(launcher, "bin", "chopin"),
			binary: join(platform, "bin", "chopin"),
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
				const { shim, binary, installJs } = layout(elsewhere);
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

	test("install.js keeps the shim for a binary that answers another version, and under pnpm and yarn", async () => {
		const { launcher, shim, binary, installJs } = layout(join(root, "unused"));
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
	});

	test("passes exit codes through, and the CLI knows it came from npm", async () => {
		const status = await run([chopin, "status", "--json"], { env: env() });
		expect(status.code).toBe(3);
		expect(JSON.parse(status.stdout)).toMatchObject({ installMethod: "npm", version: cliPackage.version });
		const usage = await run([chopin, "connect", "gemini", "--acp"], { env: env() });
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
		test(`a ${signal} to the launcher alone reaches chopin, which stops gracefully and exits 130`, async () => {
			const child = await following();
			child.kill(signal);
			expect(await child.exited).toBe(130);
			expect(await new Response(child.stderr).text()).toBe("error: Stopped following the log.\n");
		});

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
		test(`a ${signal} to the whole process group stops chopin gracefully, with 130`, async () => {
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
				PATH: process.env.PATH ?? "",
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
		const status = await run([join(bunHome, "bin", "chopin"), "status", "--json"], { env: env() });
		expect(status.code).toBe(3);
		expect(JSON.parse(status.stdout)).toMatchObject({ installMethod: "bun" });
	});

	test("without the platform package: a clear error naming the package to install", async () => {
		const lib = join(root, "alone", "lib", "node_modules");
		expect(existsSync(join(lib, "@chopin", "cli"))).toBe(true);
		expect(existsSync(join(lib, cli.target.npmPackage))).toBe(false);
		const result = await run([chopinAlone, "--version"], { env: env() });
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

describe.skipIf(!node && !REQUIRE_ALL)(
	"the launcher's libc check (how it tells musl, which it refuses plainly)",
	() => {
		const shim = join(import.meta.dir, "cli", "bin", "chopin");

		test("this glibc machine is glibc to it, asked under Node as the launcher asks", async () => {
			const code = `const { thisLibc } = require(${JSON.stringify(shim)}); console.log(thisLibc() ?? "unknown")`;
			const result = await run([node!, "-e", code]);
			expect(result.stdout).toBe(process.platform === "linux" ? "glibc\n" : "unknown\n");
		});

		test("musl is told by Node's report (no glibc version, musl's loader loaded) or by ldd", () => {
			const { libcFamily } = require(shim) as {
				libcFamily(report: unknown, ldd: string | undefined): string | undefined;
			};
			const musl = { header: {}, sharedObjects: ["/lib/ld-musl-x86_64.so.1", "/lib/libc.musl-x86_64.so.1"] };
			expect(libcFamily(musl, undefined)).toBe("musl");
			expect(libcFamily({ header: { glibcVersionRuntime: "2.36" }, sharedObjects: [] }, undefined)).toBe(
				"glibc",
			);
			expect(libcFamily(undefined, '#!/bin/sh\nexec /lib/ld-musl-x86_64.so.1 --list "$@"\n')).toBe("musl");
			expect(libcFamily(undefined, "# This file is part of the GNU C Library.\n")).toBe("glibc");
			expect(libcFamily(undefined, undefined)).toBeUndefined();
		});
	},
);
