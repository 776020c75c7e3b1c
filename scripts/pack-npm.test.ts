import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeSums } from "./build-cli";
import { packNpm } from "./pack-npm";
import { TARGETS } from "./release/targets";

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A release directory holding stand-in binaries (bytes only: packing never runs them). */
async function release(names: string[]): Promise<{ root: string; dist: string }> {
	const root = mkdtempSync(join(tmpdir(), "chopin-pack-npm-"));
	dirs.push(root);
	const dist = join(root, "dist");
	mkdirSync(dist);
	for (const name of names) writeFileSync(join(dist, name), `binary ${name}\n`);
	await writeSums(dist);
	return { root, dist };
}

describe("packNpm", () => {
	test("stamps the version into every package and puts each binary in its package's bin/", async () => {
		const { root, dist } = await release(TARGETS.map((t) => t.asset));
		const out = join(root, "npm");
		mkdirSync(join(out, "stale"), { recursive: true });
		const result = await packNpm({
			distDir: dist,
			outDir: out,
			version: "1.2.3",
			requireAll: true,
			log: () => {},
		});
		expect(readdirSync(out).sort()).toEqual([
			"cli",
			"cli-darwin-arm64",
			"cli-darwin-x64",
			"cli-linux-arm64",
			"cli-linux-x64",
			"cli-win32-x64",
		]);
		const win = join(out, "cli-win32-x64");
		expect(JSON.parse(readFileSync(join(win, "package.json"), "utf8"))).toEqual({
			name: "@chopin/cli-win32-x64",
			version: "1.2.3",
			description:
				"The chopin CLI's binary for win32-x64. Install @chopin/cli, which picks this package for you.",
			homepage: "https://github.com/chopin-app/chopin#readme",
			repository: {
				type: "git",
				url: "git+https://github.com/chopin-app/chopin.git",
				directory: "npm/platform",
			},
			os: ["win32"],
			cpu: ["x64"],
			files: ["bin/", "README.md"],
			preferUnplugged: true,
		});
		expect(readFileSync(join(win, "bin", "chopin.exe"), "utf8")).toBe("binary chopin-windows-x64.exe\n");
		expect(readFileSync(join(win, "README.md"), "utf8")).toContain("for win32-x64, version 1.2.3");
		expect(statSync(join(out, "cli-linux-arm64", "bin", "chopin")).mode & 0o777).toBe(0o755);
		// Only the Linux builds need glibc; npm reads `libc` on Linux alone, and the others have none to declare.
		for (const target of TARGETS) {
			const dir = join(out, target.npmPackage.replace("@chopin/", ""));
			const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
			expect({ name: manifest.name, libc: manifest.libc }).toEqual({
				name: target.npmPackage,
				libc: target.node.platform === "linux" ? ["glibc"] : undefined,
			});
		}
		const launcher = JSON.parse(readFileSync(join(result.launcherDir, "package.json"), "utf8"));
		expect(launcher.version).toBe("1.2.3");
		expect(Object.values(launcher.optionalDependencies)).toEqual([
			"1.2.3",
			"1.2.3",
			"1.2.3",
			"1.2.3",
			"1.2.3",
		]);
		// The shim keeps its shebang and its executable bit; install.js is what npm runs after installing.
		expect(readdirSync(join(result.launcherDir, "bin"))).toEqual(["chopin"]);
		const shim = join(result.launcherDir, "bin", "chopin");
		expect(readFileSync(shim, "utf8")).toStartWith("#!/usr/bin/env node\n");
		expect(statSync(shim).mode & 0o777).toBe(0o755);
		expect(readFileSync(join(result.launcherDir, "install.js"), "utf8")).toContain(
			"fs.renameSync(temp, shim)",
		);
		expect(launcher.scripts).toEqual({ postinstall: "node install.js" });
		expect(launcher.bin).toEqual({ chopin: "bin/chopin" });
	});

	test("--all refuses a release without every binary; without it, the missing ones are skipped", async () => {
		const { root, dist } = await release(["chopin-linux-x64"]);
		const options = { distDir: dist, outDir: join(root, "npm"), log: () => {} };
		await expect(packNpm({ ...options, requireAll: true })).rejects.toThrow("lacks chopin-linux-arm64");
		const lines: string[] = [];
		const result = await packNpm({ ...options, log: (line) => lines.push(line) });
		expect(result.platformDirs.map((p) => p.target.name)).toEqual(["linux-x64"]);
		expect(lines[0]).toStartWith("note: no chopin-linux-arm64, chopin-darwin-x64");
	});

	test("refuses a binary that SHA256SUMS does not vouch for", async () => {
		const { root, dist } = await release(["chopin-linux-x64"]);
		writeFileSync(join(dist, "chopin-linux-x64"), "rebuilt since\n");
		await expect(packNpm({ distDir: dist, outDir: join(root, "npm"), log: () => {} })).rejects.toThrow(
			"chopin-linux-x64 does not match",
		);
		await expect(packNpm({ distDir: join(root, "nowhere"), log: () => {} })).rejects.toThrow(
			"SHA256SUMS is missing: run scripts/build-cli.ts first",
		);
	});
});
