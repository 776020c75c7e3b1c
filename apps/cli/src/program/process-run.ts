// A command run as this process: Ctrl-C and SIGTERM abort its signal, a failure becomes an error line, a hint and an
// exit code, and the log is closed at the end. Shared by process-main.ts (every command) and status-main.ts (the plain
// `chopin status`).

import type { StatusContext } from "../status/status-report";
import { CliError, EXIT, toCliError } from "./errors";
import { onInterrupt } from "./interrupts";
import type { ProcessStatusContext } from "./process-context";

export async function runAsProcess<C extends ProcessStatusContext>(
	build: (signal: AbortSignal) => C,
	command: (ctx: C) => Promise<void>,
): Promise<number> {
	const controller = new AbortController();
	const ctx = build(controller.signal);
	const interrupt = () => {
		// A second Ctrl-C does not wait for the command to wind down (its backends get SIGKILL on exit).
		if (controller.signal.aborted) process.exit(EXIT.interrupted);
		controller.abort(new CliError("interrupted", "Interrupted."));
	};
	// Counted in interrupts.ts: one Ctrl-C that reaches chopin both directly and through the npm launcher is one.
	const stopListening = onInterrupt(interrupt);
	try {
		await command(ctx);
		return EXIT.ok;
	} catch (thrown) {
		return reportFailure(thrown, ctx);
	} finally {
		stopListening();
		ctx.closeLog();
	}
}

/** Writes the error and its hint (redacted) to stderr, logs what chopin did not plan for, and gives the exit code. */
export function reportFailure(
	thrown: unknown,
	ctx: Pick<StatusContext, "stderr" | "secrets" | "log" | "paths">,
): number {
	const error = toCliError(thrown);
	if (error.code === "unexpected") ctx.log.error({ err: thrown }, "command failed unexpectedly");
	ctx.stderr.write(`error: ${ctx.secrets.redact(error.message)}\n`);
	const hint =
		error.code === "unexpected"
			? `This is a bug in chopin; ${ctx.paths.logFile} has the details.`
			: error.hint;
	if (hint) ctx.stderr.write(`hint: ${ctx.secrets.redact(hint)}\n`);
	return error.exitCode;
}
