// Compiles the chopin CLI into standalone binaries (bun build --compile) and writes the release directory with its SHA256SUMS.
//
//   bun scripts/build-cli.ts                 this machine's target only
//   bun scripts/build-cli.ts --all           all five release targets
//   bun scripts/build-cli.ts linux-arm64 windows-x64 [--out DIR]
//
// The release directory, dist/cli/<version>/ by default, holds exactly the assets of a GitHub
// release: chopin-<os>-<arch>[.exe], install.sh, install.ps1 and SHA256SUMS over all of them.
import { copyFileSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import cliPackage from "../apps/cli/package.json" with { type: "json" };
import { formatSums, sha256File } from "./release/sha256";
import { hostTarget, isTargetName, TARGET_NAMES, type Target, targetByName } from "./release/targets";

export const ROOT = resolve(import.meta.dir, "..");
export const CLI_ENTRY = join(ROOT, "apps/cli/src/main.ts");
export const CLI_VERSION: string = cliPackage.version;
const INSTALLERS = ["install.sh", "install.ps1"] as const;

/**
 * The flags every release binary is built with (DESIGN: --minify --bytecode). ESM with --splitting:
 * an ESM binary parses every module of its chunk at start (~10 ms for chopin in one chunk), so what
 * main.ts loads with import() goes into chunks of its own, parsed only when imported; `--version`
 * then starts as fast as an empty program (docs/install.md § Start-up time). Top-level await stays legal.
 */
export const COMPILE_FLAGS = ["--compile", "--minify", "--bytecode", "--format=esm", "--splitting"] as const;

export interface BuildOptions {
	targets: readonly Target[];
	/** Default dist/cli/<version>. */
	outDir?: string;
	/** Progress lines; default stderr. */
	log?: (line: string) => void;
}

export interface BuiltFile {
	name: string;
	path: string;
	bytes: number;
	sha256: string;
}

export interface BuildResult {
	outDir: string;
	version: string;
	/** The binaries built by this run, in target order. */
	binaries: (BuiltFile & { target: Target })[];
	/** Every file SHA256SUMS lists (binaries from earlier runs into the same directory included). */
	sums: BuiltFile[];
}

export function defaultOutDir(version = CLI_VERSION): string {
	return join(ROOT, "dist", "cli", version);
}

/**
 * Compiles one target into `<outDir>/<asset>`; throws with bun's output when the compile fails.
 * `entry` and `flags` are for the start-up bench's comparisons; a release uses the defaults.
 */
export async function compileTarget(
	target: Target,
	outDir: string,
	options: { entry?: string; flags?: readonly string[] } = {},
): Promise<string> {
	const outfile = join(outDir, target.asset);
	const flags = options.flags ?? COMPILE_FLAGS;
	const entry = options.entry ?? CLI_ENTRY;
	const child = Bun.spawn(
		[process.execPath, "build", ...flags, `--target=${target.bun}`, entry, "--outfile", outfile],
		{ cwd: ROOT, stdout: "pipe", stderr: "pipe", stdin: "ignore" },
	);
	const [stdout, stderr, code] = await Promise.all([
		new Response(child.stdout).text(),
		new Response(child.stderr).text(),
		child.exited,
	]);
	if (code !== 0) throw new Error(`bun build for ${target.name} failed (exit ${code}):\n${stdout}${stderr}`);
	return outfile;
}

/**
 * Replaces the signature Bun leaves on a macOS binary with a fresh ad-hoc one. Bun appends the
 * program after linking, and recent macOS releases kill (SIGKILL at exec) binaries whose embedded
 * signature no longer matches; `codesign` exists only on macOS, which is where releases are built.
 * Fails closed: any step that fails, the strict verify included, throws and the build stops.
 * `codesign` is the program to run (a test passes one that fails).
 */
export async function adHocSign(binary: string, codesign = "codesign"): Promise<void> {
	for (const args of [
		["--remove-signature", binary],
		["--force", "--sign", "-", binary],
		["--verify", "--strict", binary],
	]) {
		const child = Bun.spawn([codesign, ...args], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
		const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
		if (code !== 0) throw new Error(`codesign ${args.join(" ")} failed (exit ${code}): ${stderr}`);
	}
}

/** Runs a freshly built binary of this machine's target: it must print the version and its help. */
export async function smokeTest(binary: string, version = CLI_VERSION): Promise<void> {
	const run = async (args: string[]) => {
		const child = Bun.spawn([binary, ...args], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
		const [stdout, stderr, code] = await Promise.all([
			new Response(child.stdout).text(),
			new Response(child.stderr).text(),
			child.exited,
		]);
		return { stdout, stderr, code };
	};
	const printed = await run(["--version"]);
	if (printed.code !== 0 || printed.stdout.trim() !== version) {
		throw new Error(
			`${binary} --version printed ${JSON.stringify(printed.stdout.trim())} (exit ${printed.code}), expected ${version}: ${printed.stderr}`,
		);
	}
	const help = await run(["--help"]);
	if (help.code !== 0 || !help.stdout.includes("Usage: chopin")) {
		throw new Error(`${binary} --help failed (exit ${help.code}): ${help.stderr}`);
	}
}

export async function buildCli(options: BuildOptions): Promise<BuildResult> {
	const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
	const outDir = resolve(options.outDir ?? defaultOutDir());
	mkdirSync(outDir, { recursive: true });
	const host = hostTarget();
	const binaries: BuildResult["binaries"] = [];
	const darwinUnsigned: string[] = [];
	for (const target of options.targets) {
		log(`compiling ${target.asset} (${target.bun})`);
		const path = await compileTarget(target, outDir);
		if (target.node.platform === "darwin") {
			if (process.platform === "darwin") await adHocSign(path);
			else darwinUnsigned.push(target.asset);
		}
		if (target === host) await smokeTest(path);
		binaries.push({
			target,
			name: target.asset,
			path,
			bytes: statSync(path).size,
			sha256: await sha256File(path),
		});
	}
	if (darwinUnsigned.length > 0) {
		log(
			`note: ${darwinUnsigned.join(", ")} keep Bun's own signature: only a build on macOS re-signs them (a release does)`,
		);
	}
	for (const name of INSTALLERS) copyFileSync(join(ROOT, "installers", name), join(outDir, name));
	const sums = await writeSums(outDir);
	log(`wrote ${relative(process.cwd(), join(outDir, "SHA256SUMS"))} (${sums.length} files)`);
	return { outDir, version: CLI_VERSION, binaries, sums };
}

/** SHA256SUMS over every release asset in the directory: the binaries and the installers. */
export async function writeSums(outDir: string): Promise<BuiltFile[]> {
	const names = readdirSync(outDir)
		.filter(
			(name) =>
				/^chopin-[a-z0-9]+-[a-z0-9]+(\.exe)?$/.test(name) || (INSTALLERS as readonly string[]).includes(name),
		)
		.sort();
	const files: BuiltFile[] = [];
	for (const name of names) {
		const path = join(outDir, name);
		files.push({ name, path, bytes: statSync(path).size, sha256: await sha256File(path) });
	}
	writeFileSync(join(outDir, "SHA256SUMS"), formatSums(new Map(files.map((f) => [f.name, f.sha256]))));
	return files;
}

/** argv -> the targets to build: names, `--all`, or this machine's target. */
export function parseBuildArgs(argv: readonly string[]): { targets: Target[]; outDir?: string } {
	const { values, positionals } = parseArgs({
		args: [...argv],
		options: { all: { type: "boolean", default: false }, out: { type: "string" } },
		allowPositionals: true,
	});
	let targets: Target[];
	if (values.all) {
		if (positionals.length > 0) throw new Error("give either --all or target names, not both");
		targets = TARGET_NAMES.map(targetByName);
	} else if (positionals.length > 0) {
		targets = positionals.map((name) => {
			if (!isTargetName(name)) throw new Error(`unknown target ${name}; one of ${TARGET_NAMES.join(", ")}`);
			return targetByName(name);
		});
	} else {
		const host = hostTarget();
		if (!host) throw new Error(`chopin is not built for ${process.platform}-${process.arch}; name a target`);
		targets = [host];
	}
	return { targets: [...new Set(targets)], ...(values.out ? { outDir: values.out } : {}) };
}

if (import.meta.main) {
	try {
		const result = await buildCli(parseBuildArgs(Bun.argv.slice(2)));
		for (const file of result.binaries) {
			console.log(
				`${file.sha256}  ${relative(process.cwd(), file.path)}  ${(file.bytes / 2 ** 20).toFixed(1)} MiB`,
			);
		}
	} catch (error) {
		console.error(`build-cli: ${(error as Error).message}`);
		process.exit(1);
	}
}
