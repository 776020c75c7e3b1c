// The npm launcher test's installs: this machine's own binary (what CI's portable job has: its runner's target) packed
// by pack-npm and `npm pack`, then installed globally from the tarballs, offline, into temp prefixes, as npm does on
// this platform (the layout: scripts/testing/npm-global.ts).
import { copyFileSync, linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { type PackResult, packNpm } from "../../scripts/pack-npm";
import { COMPILE_TIMEOUT_MS, type CompiledCli, compileCli, run } from "../../scripts/testing/compiled-cli";
import {
	commandLine,
	type NpmGlobalLayout,
	npmGlobalLayout,
	platformEnv,
	searchPath,
} from "../../scripts/testing/npm-global";

export interface LauncherInstalls {
	readonly root: string;
	readonly cli: CompiledCli;
	readonly packed: PackResult;
	/** The two packages npm packed: the launcher's and this machine's platform package's. */
	readonly tarballs: readonly string[];
	/** `npm install -g --ignore-scripts` of both: the command is the JS shim. */
	readonly shim: NpmGlobalLayout;
	/** Both installed with install scripts: bin/chopin is the binary itself (install.js), but on Windows. */
	readonly direct: NpmGlobalLayout;
	/** What install.js printed when npm ran it for `direct` (--foreground-scripts). */
	readonly installOutput: string;
	/** The launcher installed without the platform package (as --omit=optional would). */
	readonly alone: NpmGlobalLayout;
	/** A PATH with node and nothing else: no bun. */
	readonly nodeOnlyPath: string;
	/** Runs npm as the installs above did (offline, in root), with `env` added; throws when it fails. */
	npm(args: string[], env?: Record<string, string>): Promise<{ stdout: string; stderr: string }>;
	/** Deletes it all (the binary's ~110 MB included): call it from afterAll. */
	remove(): void;
}

/** npm itself: on Windows its `.cmd` (Bun.which could as well find the sh script beside it). */
export function findNpm(): string | null {
	return Bun.which(process.platform === "win32" ? "npm.cmd" : "npm");
}

/** Runs a program, or an npm `.cmd` shim as a Windows console does (through cmd.exe), to its end. */
export function runCommand(file: string, args: readonly string[], options: Parameters<typeof run>[1] = {}) {
	const line = commandLine(file, args);
	return run(line.cmd, { ...options, windowsVerbatimArguments: line.windowsVerbatimArguments });
}

/** @chopin/cli's bin/chopin as a global install left it: the JS shim, or the binary install.js put there. */
export const launcherBin = (layout: NpmGlobalLayout) =>
	join(layout.packageDir("@chopin/cli"), "bin", "chopin");

/** Compiling and four npm runs take a while (npm is slow on Windows): the beforeAll waits this long. */
export const INSTALL_TIMEOUT_MS = COMPILE_TIMEOUT_MS + 180_000;

export async function installLauncher(tools: { node: string; npm: string }): Promise<LauncherInstalls> {
	const root = mkdtempSync(join(tmpdir(), "chopin-npm-"));
	let cli: CompiledCli | undefined;
	const remove = () => {
		cli?.remove();
		rmSync(root, { recursive: true, force: true });
	};
	/** npm, kept off the network: tarballs only, a fresh cache, a registry nobody answers on. */
	const npmRun = async (args: string[], env: Record<string, string> = {}) => {
		const result = await runCommand(tools.npm, args, {
			cwd: root,
			env: {
				...platformEnv(),
				PATH: searchPath(),
				HOME: join(root, "npm-home"),
				npm_config_cache: join(root, "npm-cache"),
				npm_config_userconfig: join(root, "npm-home", ".npmrc"),
				npm_config_registry: "http://127.0.0.1:9/",
				npm_config_offline: "true",
				npm_config_audit: "false",
				npm_config_fund: "false",
				npm_config_update_notifier: "false",
				...env,
			},
		});
		if (result.code !== 0)
			throw new Error(`npm ${args.join(" ")} failed (${result.code}):\n${result.stderr}`);
		return result;
	};
	try {
		cli = await compileCli();
		const packed = await packNpm({ distDir: cli.dir, outDir: join(root, "packages"), log: () => {} });
		const packs = join(root, "packs");
		mkdirSync(packs);
		const platform = packed.platformDirs.find((p) => p.target === cli!.target)!;
		await npmRun(["pack", packed.launcherDir, platform.dir, "--pack-destination", packs]);
		// Absolute paths: npm reads `packs/x.tgz` as a GitHub repository.
		const tarballs = [
			join(packs, `chopin-cli-${packed.version}.tgz`),
			join(packs, `chopin-${basename(platform.dir)}-${packed.version}.tgz`),
		];
		const global = async (prefix: string, ...args: string[]) => {
			const result = await npmRun([
				"install",
				"-g",
				"--prefix",
				join(root, prefix),
				"--foreground-scripts",
				...args,
			]);
			return { layout: npmGlobalLayout(join(root, prefix), "chopin"), output: result.stderr };
		};
		const shim = (await global("shim", "--ignore-scripts", ...tarballs)).layout;
		const direct = await global("direct", ...tarballs);
		const alone = (await global("alone", "--ignore-scripts", tarballs[0]!)).layout;
		const nodeOnlyPath = join(root, "node-only");
		mkdirSync(nodeOnlyPath);
		if (process.platform !== "win32") symlinkSync(tools.node, join(nodeOnlyPath, "node"));
		else {
			// A symlink needs a privilege on Windows; a hard link does not (but only within a volume).
			const nodeExe = join(nodeOnlyPath, "node.exe");
			try {
				linkSync(tools.node, nodeExe);
			} catch {
				copyFileSync(tools.node, nodeExe);
			}
		}
		return {
			root,
			cli,
			packed,
			tarballs,
			shim,
			direct: direct.layout,
			installOutput: direct.output,
			alone,
			nodeOnlyPath,
			npm: npmRun,
			remove,
		};
	} catch (error) {
		remove();
		throw error;
	}
}
