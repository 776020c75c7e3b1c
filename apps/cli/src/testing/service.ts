// Service tests' helpers: a strict command runner that records every command and answers only the ones a test expects
// (systemctl, launchctl and schtasks are the true edge: none runs here), the service deps on a test context, and the
// Windows branch's files mapped onto a temp dir.
import { afterEach } from "bun:test";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ManualClock } from "@chopin/agent-link/clock";
import { execa } from "execa";
import type { Platform } from "../local/paths";
import { saveCredential } from "../machine/credential";
import { saveMachineConfig } from "../machine/machine-config";
import type { ServiceDeps } from "../service/deps";
import type { CommandResult, CommandRunner } from "../service/runner";
import { hostServiceFiles, type ServiceFiles } from "../service/service-files";
import { createTestContext, type TestContext } from "./context";
import { sampleCredential } from "./credential";

export type Answer = Partial<CommandResult> | ((argv: readonly string[]) => Promise<Partial<CommandResult>>);

export interface RecordingRunner {
	run: CommandRunner;
	/** Every command run, in order, as one line each (words joined by spaces). */
	readonly calls: string[];
	/** Sets (or replaces) the answer to a command, given as its words joined by spaces. */
	answer(command: string, answer: Answer): void;
}

/** Unknown commands fail the test: a command nobody expected is a bug, not a default. */
export function recordingRunner(answers: Record<string, Answer> = {}): RecordingRunner {
	const table = new Map(Object.entries(answers));
	const calls: string[] = [];
	return {
		calls,
		answer: (command, answer) => table.set(command, answer),
		run: async (argv) => {
			const line = argv.join(" ");
			calls.push(line);
			const answer = table.get(line);
			if (answer === undefined) throw new Error(`unexpected command: ${line}`);
			const result = typeof answer === "function" ? await answer(argv) : answer;
			return { exitCode: 0, stdout: "", stderr: "", ...result };
		},
	};
}

/** An answer that really runs the command (the installed chopin's --version: our own binary, not an edge). */
export const reallyRun: Answer = async (argv) => {
	const result = await execa(argv[0]!, argv.slice(1), { reject: false, stdin: "ignore" });
	return { exitCode: result.exitCode ?? 1, stdout: String(result.stdout), stderr: String(result.stderr) };
};

/**
 * The Windows branch's files on this host: `C:\x\y` is <root>/c/x/y, lower-cased as Windows compares names, and a
 * path without a drive (a POSIX state dir joined with `\`) is that POSIX path, so files written for Windows are real
 * files a test reads back.
 */
export function windowsFiles(root: string): ServiceFiles & { host(path: string): string } {
	const host = (path: string) => {
		const drive = /^([A-Za-z]):[\\/]/.exec(path);
		const rest = (drive ? path.slice(3) : path).replaceAll("\\", "/");
		return drive ? join(root, `${drive[1]}/${rest}`.toLowerCase()) : rest;
	};
	const real = hostServiceFiles("linux");
	return {
		host,
		isRunnable: (path) => real.isRunnable(host(path)),
		realDir: (path) => real.realDir(host(path)),
		write: (file, content, mode) => real.write(host(file), content, mode),
		read: (file) => real.read(host(file)),
		remove: (file) => real.remove(host(file)),
	};
}

/** Writes an empty file (and its directories) under the Windows mapping, e.g. an agent's `.cmd`. */
export function touch(path: string, mode = 0o755): void {
	const { writeFileSync } = require("node:fs") as typeof import("node:fs");
	mkdirSync(dirname(path), { recursive: true });
	writeFileSync(path, "", { mode });
}

/** The service deps on a test context: the recording runner, and the platform, user and systemd as the test says. */
export function serviceTestDeps(
	ctx: TestContext,
	runner: RecordingRunner,
	options: {
		platform?: Platform;
		uid?: number;
		user?: string;
		systemdBooted?: boolean;
		files?: ServiceFiles;
		program?: string[];
		env?: Record<string, string | undefined>;
	} = {},
): ServiceDeps {
	const platform = options.platform ?? "linux";
	return {
		platform,
		env: { ...ctx.env, ...options.env },
		home: ctx.home,
		paths: ctx.paths,
		uid: options.uid ?? 1000,
		user: options.user ?? (platform === "win32" ? "LAPTOP\\ana" : "ana"),
		run: runner.run,
		files: options.files ?? hostServiceFiles(platform),
		clock: ctx.clock,
		signal: ctx.signal,
		stderr: ctx.stderr,
		log: ctx.log,
		secrets: ctx.secrets,
		version: ctx.version,
		program: options.program ?? [...ctx.selfCommand],
		installMethod: ctx.installMethod,
		systemdBooted: () => options.systemdBooted ?? true,
	};
}

/** A file's text (UTF-8). */
export function readText(path: string): string {
	return readFileSync(path, "utf8");
}

/** A pid no process has (above Linux's largest pid_max), for answers that name the service's daemon. */
export const DEAD_PID = 4_194_999;

/**
 * A temp dir outside /tmp: the service's PATH drops entries under /tmp (emptied at boot), so fixtures that must stay
 * on it (an agent's directory) live in /var/tmp. Removed by the caller.
 */
export function durableTempDir(): string {
	const { mkdtempSync } = require("node:fs") as typeof import("node:fs");
	return mkdtempSync("/var/tmp/chopin-service-test-");
}

/** xmllint (Debian's libxml2-utils) on a file: its exit code and what it said. */
export async function xmllint(
	args: string[],
	env: Record<string, string> = {},
): Promise<{ exitCode: number; stdout: string; stderr: string }> {
	const result = await execa("xmllint", args, { reject: false, stdin: "ignore", env });
	return { exitCode: result.exitCode ?? 127, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** An XPath expression's string value in a file, read by libxml2. */
export async function xpath(file: string, expression: string): Promise<string> {
	const result = await xmllint(["--nonet", "--xpath", `string(${expression})`, file]);
	if (result.exitCode !== 0) throw new Error(`xmllint --xpath ${expression}: ${result.stderr}`);
	return result.stdout;
}

/** Where xmllint finds the plist DTD offline: `xmllint --valid` with this in XML_CATALOG_FILES. */
export const PLIST_CATALOG = { XML_CATALOG_FILES: join(import.meta.dir, "fixtures", "plist-catalog.xml") };

/**
 * Runs `fn` while moving a ManualClock forward in the background, for code that waits on it (a retry's pause, a stop's
 * bounded wait) while real processes do their part. No test asserts how long anything took.
 */
export async function withClockRunning<T>(
	clock: ManualClock,
	fn: () => Promise<T>,
	stepMs = 100,
): Promise<T> {
	let running = true;
	const pump = (async () => {
		while (running) {
			await clock.advance(stepMs);
			await Bun.sleep(5);
		}
	})();
	try {
		return await fn();
	} finally {
		running = false;
		await pump;
	}
}

/**
 * For a test file of paired service machines: `paired(platform)` makes one; its context, a context given to
 * `adopt` and every directory given to `keep` are cleaned up after each test. Call it at the file's top level.
 */
export function pairedMachines(): {
	paired(platform?: Platform): { ctx: TestContext; agentDir: string };
	adopt(ctx: TestContext): TestContext;
	keep(dir: string): string;
} {
	let current: TestContext | undefined;
	const dirs: string[] = [];
	afterEach(() => {
		current?.cleanup();
		current = undefined;
		for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
	});
	return {
		paired(platform: Platform = "linux") {
			const machine = pairedServiceMachine(platform, dirs);
			current = machine.ctx;
			return machine;
		},
		adopt(ctx) {
			current = ctx;
			return ctx;
		},
		keep(dir) {
			dirs.push(dir);
			return dir;
		},
	};
}

/**
 * A paired machine whose ACP agent is `gemini` in a directory of its own (on PATH after /usr/bin and /bin), on a test
 * context for the platform; the agent's directory is added to `dirs` for the caller to remove.
 */
export function pairedServiceMachine(
	platform: Platform,
	dirs: string[],
): { ctx: TestContext; agentDir: string } {
	const dir = durableTempDir();
	dirs.push(dir);
	const agentDir = join(dir, "npm-global", "bin");
	touch(join(agentDir, "gemini"));
	const ctx = createTestContext({ platform, env: { PATH: `/usr/bin:/bin:${agentDir}` } });
	saveCredential(ctx, sampleCredential());
	saveMachineConfig(ctx.paths, {
		version: 1,
		server: "https://chopin.example",
		label: "laptop",
		checkouts: [],
		acpCommand: ["gemini", "--experimental-acp"],
	});
	return { ctx, agentDir };
}

/** The error an install ends with (a test fails if it succeeds). */
export async function installError(
	deps: ServiceDeps,
): Promise<{ code: string; message: string; hint?: string }> {
	const { installService } = await import("../service/install");
	return installService(deps).then(
		() => {
			throw new Error("expected the install to fail");
		},
		(error: unknown) => error as { code: string; message: string; hint?: string },
	);
}
