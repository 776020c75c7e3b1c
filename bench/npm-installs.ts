// The two ways `npm install -g @chopin/cli` leaves chopin, for bench/cli-startup.ts: with install scripts (install.js
// put the binary itself at bin/chopin) and with --ignore-scripts (the Node.js shim starts the binary). Packed from
// the binary being timed, installed offline from the tarballs into temp prefixes.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { writeSums } from "../scripts/build-cli";
import { packNpm } from "../scripts/pack-npm";
import type { Target } from "../scripts/release/targets";
import { commandLine, npmGlobalLayout, platformEnv, searchPath } from "../scripts/testing/npm-global";

export interface NpmInstalls {
	/** The command after `npm install -g --ignore-scripts` (<prefix>/bin/chopin): the JS shim. */
	shim: string;
	/** The command after `npm install -g`: the binary. */
	direct: string;
	remove(): void;
}

/** Undefined (with the reason on stderr) when Node.js or npm is missing, or the install scripts kept the shim. */
export async function npmInstalls(binary: string, target: Target): Promise<NpmInstalls | undefined> {
	const npm = Bun.which(process.platform === "win32" ? "npm.cmd" : "npm");
	if (!Bun.which("node") || !npm) {
		process.stderr.write("note: no Node.js or npm: the npm launcher's rows are left out\n");
		return undefined;
	}
	const root = mkdtempSync(join(tmpdir(), "chopin-bench-npm-"));
	const remove = () => rmSync(root, { recursive: true, force: true });
	try {
		// A release directory of this one binary, as pack-npm takes it.
		const dist = join(root, "dist");
		mkdirSync(dist);
		copyFileSync(binary, join(dist, target.asset));
		await writeSums(dist);
		const packed = await packNpm({ distDir: dist, outDir: join(root, "packages"), log: () => {} });
		const packs = join(root, "packs");
		mkdirSync(packs);
		const platformDir = packed.platformDirs[0]!.dir;
		const npmEnv = {
			...platformEnv(),
			PATH: searchPath(),
			HOME: join(root, "home"),
			npm_config_cache: join(root, "npm-cache"),
			npm_config_registry: "http://127.0.0.1:9/",
			npm_config_offline: "true",
			npm_config_audit: "false",
			npm_config_fund: "false",
			npm_config_update_notifier: "false",
		};
		const npmRun = (args: string[]) => {
			// npm.cmd on Windows runs through cmd.exe.
			const line = commandLine(npm, args);
			const result = Bun.spawnSync(line.cmd, {
				windowsVerbatimArguments: line.windowsVerbatimArguments,
				cwd: root,
				env: npmEnv,
				stdout: "pipe",
				stderr: "pipe",
			});
			if (result.exitCode !== 0)
				throw new Error(`npm ${args.join(" ")} failed:\n${result.stderr.toString()}`);
		};
		npmRun(["pack", packed.launcherDir, platformDir, "--pack-destination", packs]);
		const tarballs = [
			join(packs, `chopin-cli-${packed.version}.tgz`),
			join(packs, `chopin-${basename(platformDir)}-${packed.version}.tgz`),
		];
		npmRun(["install", "-g", "--prefix", join(root, "shim"), "--ignore-scripts", ...tarballs]);
		npmRun(["install", "-g", "--prefix", join(root, "direct"), ...tarballs]);
		const shim = npmGlobalLayout(join(root, "shim"), "chopin");
		const direct = npmGlobalLayout(join(root, "direct"), "chopin");
		const installs = { shim: shim.command, direct: direct.command, remove };
		const directBin = join(direct.packageDir("@chopin/cli"), "bin", "chopin");
		if (readFileSync(directBin).subarray(0, 2).toString() === "#!") {
			process.stderr.write(
				"note: the install script kept the JS shim (Windows?): the npm rows are left out\n",
			);
			remove();
			return undefined;
		}
		return installs;
	} catch (error) {
		remove();
		throw error;
	}
}
