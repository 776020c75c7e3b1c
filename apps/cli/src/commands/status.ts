// `chopin status`: versions, server and account, pairing (never the token), what is served and how the connection is;
// --json prints the report (status-report.ts) for scripts. Exit 0 connected, 4 not connected, 3 not paired.
import { Command } from "commander";
import { z } from "zod";
import type { CliContext } from "../context";
import { CliError } from "../errors";
import { parseOptions } from "../options";
import { gatherStatus, type StatusReport, statusReportSchema } from "../status-report";
import { formatStatus } from "../status-text";
import { examples, type Run } from "./help";

export { formatStatus, gatherStatus, type StatusReport, statusReportSchema };

export const statusOptionsSchema = z.strictObject({ json: z.boolean() });
export type StatusOptions = z.infer<typeof statusOptionsSchema>;

export function statusCommand(ctx: CliContext, run: Run<StatusOptions> = runStatus): Command {
	const command = new Command("status");
	return command
		.description("Show whether this machine is paired, what it serves, and whether its daemon runs.")
		.option("--json", "print the report as JSON on stdout and nothing else there", false)
		.addHelpText(
			"after",
			examples(
				[
					["See the machine's state", "chopin status"],
					[
						"Check from a script whether the machine is connected",
						"chopin status --json | jq -r .connection.state",
					],
				],
				"Exit status: 0 when connected, 4 when not connected (no daemon, or it is reconnecting), 3 when not paired.",
			),
		)
		.action(async () => run(parseOptions(statusOptionsSchema, command.opts(), "status"), ctx));
}

export async function runStatus(options: StatusOptions, ctx: CliContext): Promise<void> {
	const report = await gatherStatus(ctx);
	if (options.json) ctx.stdout.write(`${JSON.stringify(statusReportSchema.parse(report), null, 2)}\n`);
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
		return new CliError(
			"not-connected",
			daemon.problem ?? "This machine is paired, but no chopin daemon is running.",
			"Start it with `chopin run` or `chopin service install`.",
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
