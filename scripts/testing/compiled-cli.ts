// This machine's chopin binary, compiled into a temp release directory for the tests of one file.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BuildResult, buildCli } from "../build-cli";
import { hostTarget, type Target } from "../release/targets";

export interface CompiledCli {
	/** A release directory: the binary, install.sh, install.ps1 and SHA256SUMS. */
	readonly dir: string;
	readonly binary: string;
	readonly target: Target;
	readonly version: string;
	readonly build: BuildResult;
	/** Deletes the directory (~110 MB): call it from afterAll. */
	remove(): void;
}

/** Compiling takes seconds and ~110 MB: give the beforeAll that waits for it a timeout this long. */
export const COMPILE_TIMEOUT_MS = 180_000;

/**
 * Compiles once for the file that calls it (from beforeAll), to be removed by its afterAll.
 * Not shared across files: bun test runs no hook after the last file, so nothing could delete a
 * shared build, and leaving 110 MB in the temp dir after every run is worse than a few seconds.
 */
export async function compileCli(): Promise<CompiledCli> {
	const target = hostTarget();
	if (!target) throw new Error(`chopin is not built for ${process.platform}-${process.arch}`);
	const dir = mkdtempSync(join(tmpdir(), "chopin-compiled-"));
	const remove = () => rmSync(dir, { recursive: true, force: true });
	try {
		const build = await buildCli({ targets: [target], outDir: dir, log: () => {} });
		return { dir, binary: build.binaries[0]!.path, target, version: build.version, build, remove };
	} catch (error) {
		remove();
		throw error;
	}
}

/** Runs a program to its end and collects what it printed. */
export async function run(
	argv: readonly string[],
	options: {
		env?: Record<string, string | undefined>;
		cwd?: string;
		stdin?: string;
		/** A cmd.exe command line (see npm-global.ts's commandLine): passed on as it is, on Windows. */
		windowsVerbatimArguments?: boolean;
	} = {},
): Promise<{ stdout: string; stderr: string; code: number | null; signal: string | null }> {
	const child = Bun.spawn([...argv], {
		env: options.env ?? process.env,
		cwd: options.cwd,
		windowsVerbatimArguments: options.windowsVerbatimArguments ?? false,
		stdin: options.stdin === undefined ? "ignore" : new TextEncoder().encode(options.stdin),
		stdout: "pipe",
		stderr: "pipe",
	});
	const [stdout, stderr] = await Promise.all([
		new Response(child.stdout).text(),
		new Response(child.stderr).text(),
	]);
	await child.exited;
	return {
		stdout,
		stderr,
		code: child.exitCode,
		signal: child.signalCode === null ? null : String(child.signalCode),
	};
}
