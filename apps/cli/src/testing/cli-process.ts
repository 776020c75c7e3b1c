// The real CLI as a child process (`bun apps/cli/src/main.ts ...`) for tests: its output read as it comes, waited on
// by pattern (never by time), its log read back, and every one killed by cleanup.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";

const MAIN = join(import.meta.dir, "..", "main.ts");

export interface CliProcess {
	readonly child: Subprocess<"ignore", "pipe", "pipe">;
	readonly pid: number;
	stdout(): string;
	stderr(): string;
	/** Resolves with the first match of the pattern in stderr (or stdout), once it has been written. */
	waitFor(pattern: RegExp, stream?: "stderr" | "stdout"): Promise<RegExpMatchArray>;
	/** The exit code (128 + n for signal n), once it exits. */
	readonly exited: Promise<number>;
	kill(signal?: NodeJS.Signals): void;
	/** For cleanup: pending waits stay pending instead of failing. */
	abandon(): void;
}

const running = new Set<CliProcess>();

/** How long a CLI told to stop at once gets before cleanup SIGKILLs it. */
const STOP_AT_ONCE_MS = 5_000;

export function spawnCli(args: string[], env: Record<string, string>, cwd?: string): CliProcess {
	const child = Bun.spawn([process.execPath, MAIN, ...args], {
		env,
		cwd,
		stdin: "ignore",
		stdout: "pipe",
		stderr: "pipe",
	});
	const text = { stdout: "", stderr: "" };
	const waiters = new Set<() => void>();
	const pump = async (stream: ReadableStream<Uint8Array>, key: "stdout" | "stderr") => {
		const decoder = new TextDecoder();
		for await (const chunk of stream) {
			text[key] += decoder.decode(chunk, { stream: true });
			for (const waiter of [...waiters]) waiter();
		}
	};
	const pumped = Promise.all([pump(child.stdout, "stdout"), pump(child.stderr, "stderr")]);
	let ended = false;
	let forget = () => {};
	/** Killed by cleanup: whoever still waits on it is gone too, so nothing is rejected. */
	let abandoned = false;
	const exited = (async () => {
		const code = await child.exited;
		await pumped;
		ended = true;
		for (const waiter of [...waiters]) waiter();
		forget();
		return child.signalCode ? 128 + signalNumber(String(child.signalCode)) : code;
	})();
	const cli: CliProcess = {
		child,
		pid: child.pid,
		stdout: () => text.stdout,
		stderr: () => text.stderr,
		waitFor: (pattern, stream = "stderr") =>
			new Promise((resolve, reject) => {
				const check = () => {
					const match = pattern.exec(text[stream]);
					if (match) {
						waiters.delete(check);
						resolve(match);
					} else if (ended && !abandoned) {
						waiters.delete(check);
						reject(
							new Error(
								`chopin ${args.join(" ")} exited without printing ${pattern}:\n${text.stdout}\n${text.stderr}`,
							),
						);
					}
				};
				waiters.add(check);
				check();
			}),
		exited,
		abandon: () => {
			abandoned = true;
		},
		kill: (signal = "SIGTERM") => {
			if (child.exitCode === null && child.signalCode === null) child.kill(signal);
		},
	};
	running.add(cli);
	forget = () => running.delete(cli);
	return cli;
}

/** Runs the CLI to the end: its output and exit code. */
export async function runCliProcess(
	args: string[],
	env: Record<string, string>,
	cwd?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
	const cli = spawnCli(args, env, cwd);
	const code = await cli.exited;
	return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

/** Ends every CLI process a test left running, its Planner backends too, and waits for each (for afterEach). */
export async function killCliProcesses(): Promise<void> {
	const all = [...running];
	for (const cli of all) {
		cli.abandon();
		// As a second Ctrl-C: the CLI exits at once and SIGKILLs its Planner backends' groups on the way out.
		// A bare SIGKILL would leave those backends running, orphaned, after the test.
		cli.kill("SIGTERM");
		cli.kill("SIGINT");
	}
	await Promise.all(
		all.map(async (cli) => {
			const timer = setTimeout(() => cli.kill("SIGKILL"), STOP_AT_ONCE_MS);
			await cli.exited;
			clearTimeout(timer);
		}),
	);
}

/** The JSON lines of a CLI log file (none when there is no file yet). */
export function readLog(file: string): Record<string, unknown>[] {
	let text: string;
	try {
		text = readFileSync(file, "utf8");
	} catch {
		return [];
	}
	return text
		.split("\n")
		.filter((line) => line.trim() !== "")
		.map((line) => JSON.parse(line) as Record<string, unknown>);
}

/**
 * Polls a condition until it holds: for waiting on an effect in another process (a file, a log
 * line, a server's view) without asserting how long it took. Fails after a generous limit.
 */
export async function eventually<T>(
	what: string,
	check: () => T | undefined | false | Promise<T | undefined | false>,
	limitMs = 20_000,
): Promise<T> {
	const deadline = Date.now() + limitMs;
	for (;;) {
		const value = await check();
		if (value) return value;
		if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
		await Bun.sleep(20);
	}
}

function signalNumber(signal: string): number {
	return ({ SIGINT: 2, SIGKILL: 9, SIGTERM: 15 } as Record<string, number>)[signal] ?? 0;
}
