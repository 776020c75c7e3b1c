// How the service code runs systemctl, loginctl, launchctl, schtasks and the installed chopin's --version: one injected
// runner, so tests assert the exact commands (and answer them) on any host.
import type { execa } from "execa";
import { CliError } from "../program/errors";

export interface CommandResult {
	/** 127 when the program could not be started at all (not installed). */
	exitCode: number;
	stdout: string;
	stderr: string;
}

export type CommandRunner = (argv: readonly string[]) => Promise<CommandResult>;

/** How long one manager command may take before it counts as failed (a hung D-Bus, say). */
export const COMMAND_TIMEOUT_MS = 60_000;

/** The real runner on the context's spawn (execa): no shell, no stdin, the user's own environment. */
export function spawnRunner(options: {
	spawn: typeof execa;
	env: Readonly<Record<string, string | undefined>>;
	signal?: AbortSignal;
}): CommandRunner {
	return async (argv) => {
		const [program, ...args] = argv;
		if (!program) throw new Error("a command needs a program");
		const result = await options.spawn(program, args, {
			env: options.env,
			extendEnv: false,
			reject: false,
			stdin: "ignore",
			timeout: COMMAND_TIMEOUT_MS,
			...(options.signal ? { cancelSignal: options.signal } : {}),
			windowsHide: true,
		});
		if (options.signal?.aborted) throw new CliError("interrupted", "Interrupted.");
		if (result.failed && result.exitCode === undefined) {
			const notFound = (result as { code?: string }).code === "ENOENT";
			return {
				exitCode: notFound ? 127 : 1,
				stdout: "",
				stderr: notFound
					? `${program}: command not found`
					: (result.shortMessage ?? `${program} could not be started`),
			};
		}
		return { exitCode: result.exitCode ?? 1, stdout: String(result.stdout), stderr: String(result.stderr) };
	};
}

/** A command as a person would type it, for messages (arguments with spaces quoted). */
export function commandText(argv: readonly string[]): string {
	return argv.map((word) => (/^[A-Za-z0-9_@%+=:,./\\-]+$/.test(word) ? word : `"${word}"`)).join(" ");
}

/** What a failed command said, in one line: its stderr (else stdout), trimmed and joined. */
export function failureText(result: CommandResult): string {
	const text = (result.stderr.trim() || result.stdout.trim() || `exit status ${result.exitCode}`)
		.split("\n")
		.map((line) => line.trim())
		.filter((line) => line !== "")
		.join(" ");
	return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}

/** Runs a command that must succeed; its failure is `service-failed`, naming the command and what it said. */
export async function runOrFail(
	run: CommandRunner,
	argv: readonly string[],
	hint?: string,
): Promise<CommandResult> {
	const result = await run(argv);
	if (result.exitCode !== 0) throw serviceFailed(argv, result, hint);
	return result;
}

export function serviceFailed(argv: readonly string[], result: CommandResult, hint?: string): CliError {
	return new CliError(
		"service-failed",
		`\`${commandText(argv)}\` failed: ${failureText(result).replace(/\.$/, "")}.`,
		hint ??
			"Fix what it names and run `chopin service install` again; `chopin service status` shows the service's state.",
	);
}
