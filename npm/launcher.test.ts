// The npm launcher for real: pack-npm's packages packed with `npm pack`, installed offline from the tarballs, run under Node without Bun.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import cliPackage from "../apps/cli/package.json" with { type: "json" };
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
/** node_modules/.bin/chopin of an install with the launcher and this machine's platform package. */
let chopin: string;
/** The same, installed without the platform package (as --omit=optional would). */
let chopinAlone: string;
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
	await npmRun(["install", "--prefix", join(root, "full"), launcherTgz, platformTgz]);
	await npmRun(["install", "--prefix", join(root, "alone"), launcherTgz]);
	chopin = join(root, "full", "node_modules", ".bin", "chopin");
	chopinAlone = join(root, "alone", "node_modules", ".bin", "chopin");
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

describe.skipIf((!node || !npm) && !REQUIRE_ALL)("the @chopin/cli launcher, installed by npm", () => {
	test("pack-npm made one package per binary and a launcher that names all five at this version", () => {
		const manifest = JSON.parse(readFileSync(join(packed.launcherDir, "package.json"), "utf8"));
		expect(manifest).toMatchObject({
			name: "@chopin/cli",
			version: cliPackage.version,
			bin: { chopin: "bin/chopin.js" },
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
		expect(packed.platformDirs.map((p) => p.target)).toEqual([cli.target]);
	});

	test("runs under Node with no Bun on PATH and prints the version", async () => {
		expect(Bun.which("bun", { PATH: nodeOnlyPath })).toBeNull();
		const result = await run([chopin, "--version"], { env: env() });
		expect(result).toEqual({ stdout: `${cliPackage.version}\n`, stderr: "", code: 0, signal: null });
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
			stdin: "ignore",
			stdout: "pipe",
			stderr: "pipe",
			detached: options.detached ?? false,
		});
		const reader = child.stdout.getReader();
		const first = await reader.read();
		// chopin printed, so the launcher has long finished setting up its signal handlers.
		expect(new TextDecoder().decode(first.value)).toContain("hello");
		reader.releaseLock();
		return child;
	}

	test("a SIGTERM to the launcher reaches chopin, which stops and exits 130", async () => {
		const child = await following();
		child.kill("SIGTERM");
		expect(await child.exited).toBe(130);
		expect(await new Response(child.stderr).text()).toContain("error: Stopped following the log.");
	});

	test("Ctrl-C to the whole process group stops chopin once, gracefully, with 130", async () => {
		const child = await following({ detached: true });
		process.kill(-child.pid, "SIGINT");
		expect(await child.exited).toBe(130);
		expect(await new Response(child.stderr).text()).toContain("error: Stopped following the log.");
	});

	test.skipIf(process.platform !== "linux")(
		"a chopin killed by a signal takes the launcher down the same way",
		async () => {
			const child = await following();
			const children = `/proc/${child.pid}/task/${child.pid}/children`;
			const binaryPid = Number(readFileSync(children, "utf8").trim().split(" ")[0]);
			expect(binaryPid).toBeGreaterThan(0);
			process.kill(binaryPid, "SIGKILL");
			await child.exited;
			expect(child.signalCode).toBe("SIGKILL");
		},
	);

	test("without the platform package: a clear error naming the package to install", async () => {
		expect(existsSync(join(root, "alone", "node_modules", "@chopin", "cli"))).toBe(true);
		expect(existsSync(join(root, "alone", "node_modules", cli.target.npmPackage))).toBe(false);
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
