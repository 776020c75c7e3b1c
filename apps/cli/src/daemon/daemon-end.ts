// How the daemon ended, written for `chopin status` and `chopin service status` to read once nothing runs: a clean
// stop, or the error it ended with (revoked, replaced, ...), with its exit code and hint.
import type { DaemonExit } from "../local/daemon-exit";
import { writeFileAtomic } from "../local/files";
import type { CliContext } from "../program/context";
import { toCliError } from "../program/errors";
import type { ServiceManagerKind } from "../service/names";

export function recordDaemonEnd(
	ctx: Pick<CliContext, "paths" | "clock" | "log" | "version" | "secrets">,
	service: ServiceManagerKind | undefined,
	failure: unknown,
): void {
	const error = failure === undefined ? undefined : toCliError(failure);
	try {
		const exit: DaemonExit = {
			version: 1,
			pid: process.pid,
			at: new Date(ctx.clock.now()).toISOString(),
			exitCode: error?.exitCode ?? 0,
			code: error?.code ?? "stopped",
			message: ctx.secrets.redact(error?.message ?? "The daemon was stopped."),
			...(error?.hint && { hint: ctx.secrets.redact(error.hint) }),
			...(service && { service }),
			daemonVersion: ctx.version,
		};
		// 0600: it names no secret, but it sits with the credential.
		writeFileAtomic(ctx.paths.daemonExitFile, `${JSON.stringify(exit, null, "\t")}\n`, { mode: 0o600 });
	} catch (writeError) {
		ctx.log.warn({ err: writeError }, "could not record how the daemon ended");
	}
}
