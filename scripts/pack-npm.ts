// Assembles the npm packages from a release directory: @chopin/cli (the launcher) and one @chopin/cli-<platform>-<arch> per binary.
//
//   bun scripts/pack-npm.ts              packages for the binaries in dist/cli/<version>/
//   bun scripts/pack-npm.ts --all        ... and fail unless all five are there (what a release publishes)
//   bun scripts/pack-npm.ts --dist DIR --out DIR
//
// Each package lands in dist/npm/<dir>/ with the version stamped, ready for `npm pack` or `npm publish`.
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { CLI_VERSION, defaultOutDir, ROOT } from "./build-cli";
import { parseSums, sha256File } from "./release/sha256";
import { TARGETS, type Target } from "./release/targets";

const NPM_DIR = join(ROOT, "npm");

export interface PackOptions {
	/** The release directory with the binaries and SHA256SUMS (default dist/cli/<version>). */
	distDir?: string;
	/** Where the package directories go (default dist/npm); emptied first. */
	outDir?: string;
	/** Fail unless every target's binary is there. */
	requireAll?: boolean;
	version?: string;
	log?: (line: string) => void;
}

export interface PackResult {
	version: string;
	/** dist/npm/cli */
	launcherDir: string;
	/** One package directory per binary found, e.g. dist/npm/cli-linux-x64. */
	platformDirs: { target: Target; dir: string }[];
}

type Json = Record<string, unknown>;

function readJson(path: string): Json {
	return JSON.parse(readFileSync(path, "utf8")) as Json;
}

function writeJson(path: string, value: Json): void {
	writeFileSync(path, `${JSON.stringify(value, null, "\t")}\n`);
}

/** Fills `{platform}`, `{arch}` and `{version}` in a template's text. */
function fill(text: string, target: Target, version: string): string {
	return text
		.replaceAll("{platform}", target.node.platform)
		.replaceAll("{arch}", target.node.arch)
		.replaceAll("{version}", version);
}

export async function packNpm(options: PackOptions = {}): Promise<PackResult> {
	const version = options.version ?? CLI_VERSION;
	const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
	const distDir = resolve(options.distDir ?? defaultOutDir(version));
	const outDir = resolve(options.outDir ?? join(ROOT, "dist", "npm"));
	const sumsFile = join(distDir, "SHA256SUMS");
	if (!existsSync(sumsFile)) throw new Error(`${sumsFile} is missing: run scripts/build-cli.ts first`);
	const sums = parseSums(readFileSync(sumsFile, "utf8"));

	const present = TARGETS.filter((t) => existsSync(join(distDir, t.asset)));
	const missing = TARGETS.filter((t) => !present.includes(t));
	if (missing.length > 0) {
		const names = missing.map((t) => t.asset).join(", ");
		if (options.requireAll) throw new Error(`${distDir} lacks ${names}`);
		log(`note: no ${names} in ${distDir}; their packages are not made`);
	}

	rmSync(outDir, { recursive: true, force: true });
	mkdirSync(outDir, { recursive: true });
	const template = readJson(join(NPM_DIR, "platform", "package.json"));
	const readme = readFileSync(join(NPM_DIR, "platform", "README.md"), "utf8");
	const platformDirs: PackResult["platformDirs"] = [];
	for (const target of present) {
		const binary = join(distDir, target.asset);
		// Publish exactly the bytes the release lists, never a binary rebuilt since.
		const digest = await sha256File(binary);
		if (sums.get(target.asset) !== digest) throw new Error(`${binary} does not match ${sumsFile}`);
		const dir = join(outDir, target.npmPackage.replace("@chopin/", ""));
		mkdirSync(join(dir, "bin"), { recursive: true });
		const manifest = JSON.parse(fill(JSON.stringify(template), target, version)) as Json;
		// The Linux builds need glibc: an npm that reads `libc` skips the package on musl, and the launcher says why.
		const libc = target.node.platform === "linux" ? { libc: ["glibc"] } : {};
		writeJson(join(dir, "package.json"), { ...manifest, version, ...libc });
		writeFileSync(join(dir, "README.md"), fill(readme, target, version));
		copyFileSync(binary, join(dir, "bin", target.npmBinary));
		chmodSync(join(dir, "bin", target.npmBinary), 0o755);
		platformDirs.push({ target, dir });
		log(`packed ${target.npmPackage}@${version} in ${relative(process.cwd(), dir)}`);
	}

	const launcherDir = join(outDir, "cli");
	mkdirSync(join(launcherDir, "bin"), { recursive: true });
	const launcher = readJson(join(NPM_DIR, "cli", "package.json"));
	// Every platform package at exactly this version, whether or not this run made it: npm picks one.
	const optionalDependencies = Object.fromEntries(TARGETS.map((t) => [t.npmPackage, version]).sort());
	writeJson(join(launcherDir, "package.json"), { ...launcher, version, optionalDependencies });
	copyFileSync(join(NPM_DIR, "cli", "README.md"), join(launcherDir, "README.md"));
	copyFileSync(join(NPM_DIR, "cli", "bin", "chopin"), join(launcherDir, "bin", "chopin"));
	chmodSync(join(launcherDir, "bin", "chopin"), 0o755);
	copyFileSync(join(NPM_DIR, "cli", "install.js"), join(launcherDir, "install.js"));
	log(`packed @chopin/cli@${version} in ${relative(process.cwd(), launcherDir)}`);
	return { version, launcherDir, platformDirs };
}

if (import.meta.main) {
	const { values } = parseArgs({
		args: Bun.argv.slice(2),
		options: { all: { type: "boolean", default: false }, dist: { type: "string" }, out: { type: "string" } },
	});
	try {
		const result = await packNpm({
			requireAll: values.all,
			...(values.dist ? { distDir: values.dist } : {}),
			...(values.out ? { outDir: values.out } : {}),
		});
		for (const { dir } of result.platformDirs) console.log(relative(process.cwd(), dir));
		console.log(relative(process.cwd(), result.launcherDir));
	} catch (error) {
		console.error(`pack-npm: ${(error as Error).message}`);
		process.exit(1);
	}
}
