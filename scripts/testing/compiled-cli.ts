// This machine's chopin binary, compiled once per `bun test` process and shared by every test file that needs one.
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
}

/** Compiling takes seconds and ~110 MB: give a test that waits for it a timeout this long. */
export const COMPILE_TIMEOUT_MS = 180_000;

let compiled: Promise<CompiledCli> | undefined;

/**
 * Bun runs all test files in one process, so the first caller compiles and the rest reuse it.
 * No single test file owns the directory, so it goes when the process exits.
 */
export function compiledCli(): Promise<CompiledCli> {
	compiled ??= compile();
	return compiled;
}

async function compile(): Promise<CompiledCli> {
	const target = hostTarget();
	if (!target) throw new Error(`chopin is not built for ${process.platform}-${process.arch}`);
	const dir = mkdtempSync(join(tmpdir(), "chopin-compiled-"));
	process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
	const build = await buildCli({ targets: [target], outDir: dir, log: () => {} });
	return { dir, binary: build.binaries[0]!.path, target, version: build.version, build };
}

/** Runs a program to its end and collects what it printed. */
export async function run(
	argv: readonly string[],
	options: { env?: Record<string, string | undefined>; cwd?: string; stdin?: string } = {},
): Promise<{ stdout: string; stderr: string; code: number | null; signal: string | null }> {
	const child = Bun.spawn([...argv], {
		env: options.env ?? process.env,
		cwd: options.cwd,
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
