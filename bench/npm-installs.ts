// The two ways `npm install -g @chopin/cli` leaves chopin, for bench/cli-startup.ts: with install scripts (install.js
// put the binary itself at bin/chopin) and with --ignore-scripts (the Node.js shim starts the binary). Packed from
// the binary being timed, installed offline from the tarballs into temp prefixes.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeSums } from "../scripts/build-cli";
import { packNpm } from "../scripts/pack-npm";
import type { Target } from "../scripts/release/targets";

export interface NpmInstalls {
	/** <prefix>/bin/chopin after `npm install -g --ignore-scripts`: the JS shim. */
	shim: string;
	/** <prefix>/bin/chopin after `npm install -g`: the binary. */
	direct: string;
	remove(): void;
}

/** Undefined (with the reason on stderr) when Node.js or npm is missing, or the install scripts kept the shim. */
export async function npmInstalls(binary: string, target: Target): Promise<NpmInstalls | undefined> {
	const npm = Bun.which("npm");
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
			PATH: process.env.PATH ?? "",
			HOME: join(root, "home"),
			npm_config_cache: join(root, "npm-cache"),
			npm_config_registry: "http://127.0.0.1:9/",
			npm_config_offline: "true",
			npm_config_audit: "false",
			npm_config_fund: "false",
			npm_config_update_notifier: "false",
		};
		const npmRun = (args: string[]) => {
			const result = Bun.spawnSync([npm, ...args], {
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
			join(packs, `chopin-${platformDir.split("/").at(-1)}-${packed.version}.tgz`),
		];
		npmRun(["install", "-g", "--prefix", join(root, "shim"), "--ignore-scripts", ...tarballs]);
		npmRun(["install", "-g", "--prefix", join(root, "direct"), ...tarballs]);
		const installs = {
			shim: join(root, "shim", "bin", "chopin"),
			direct: join(root, "direct", "bin", "chopin"),
			remove,
		};
		if (readFileSync(installs.direct).subarray(0, 2).toString() === "#!") {
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
