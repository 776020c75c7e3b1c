// What `chopin status` does once its options are parsed: gather the report, print it (text or --json), and end with
// the error that says what is wrong. Apart from the commander definition (status.ts), so that status-main.ts can run
// the plain `chopin status [--json]` without loading commander or zod (docs/install.md § Start-up time).
import type { DaemonStatus } from "../local/ipc";
import { CliError, isCliErrorCode } from "../program/errors";
import { FINAL_EXIT_CODES } from "../service/names";
import { gatherStatus, type StatusContext, type StatusReport } from "../status/status-report";
import { formatStatus } from "../status/status-text";

export interface StatusOptions {
	json: boolean;
}

/** Gathers and prints; `own` is the daemon's status when the daemon runs this for a client (status-for-client.ts). */
export async function runStatus(
	options: StatusOptions,
	ctx: StatusContext,
	own?: DaemonStatus,
): Promise<void> {
	const report = await gatherStatus(ctx, own);
	// Not parsed again on the way out (that would load zod): the tests check every report against statusReportSchema.
	if (options.json) ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
	else ctx.stdout.write(formatStatus(report));
	const problem = statusProblem(report);
	if (problem) throw problem;
}

/** The error status ends with, most fundamental first: not paired, a damaged file, no daemon, not connected. */
export function statusProblem(report: StatusReport): CliError | undefined {
	const { credential, config, daemon, connection } = report;
	if (!credential.stored) {
		return new CliError(
			"not-paired",
			"This machine is not paired with a Chopin server.",
			"Run `chopin connect` to pair it.",
		);
	}
	if (!credential.valid)
		return new CliError(
			"credential-invalid",
			credential.problem,
			`Delete ${credential.file} and run \`chopin connect\` again.`,
		);
	if ("problem" in config)
		return new CliError(
			"config-invalid",
			config.problem,
			`Fix or delete ${config.file}, then run \`chopin connect\`.`,
		);
	if (!daemon.running) {
		// The last daemon was refused for good (revoked, replaced...) with this very credential: that is why, not "start it".
		const last = daemon.lastExit;
		if (
			last &&
			FINAL_EXIT_CODES.includes(last.exitCode) &&
			isCliErrorCode(last.code) &&
			last.at >= credential.createdAt
		)
			return new CliError(last.code, last.message, last.hint);
		return new CliError(
			"not-connected",
			daemon.problem ?? "This machine is paired, but no chopin daemon is running.",
			report.service.state === "not-installed"
				? "Start it with `chopin run` or `chopin service install`."
				: "Its service is installed but not running: `chopin service status` says why; `chopin service install` starts it again.",
		);
	}
	if (connection.state !== "connected") {
		return new CliError(
			"not-connected",
			`The chopin daemon (pid ${daemon.pid}) runs but is not connected to ${report.server ?? "its server"}${connection.lastError ? `: ${connection.lastError}` : ""}.`,
			"It keeps trying by itself; `chopin logs` shows each attempt.",
		);
	}
	return undefined;
}
