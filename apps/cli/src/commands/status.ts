// `chopin status`: versions, server and account, pairing (never the token), what is served and how the connection is;
// --json prints the report (status-report.ts) for scripts. Exit 0 connected, 4 not connected, 3 not paired.
// The run half is status-run.ts.
import { Command } from "commander";
import { z } from "zod";
import type { CliContext } from "../program/context";
import { parseOptions } from "../program/options";
import { examples, type Run } from "./help";
import { runStatus, type StatusOptions } from "./status-run";

export type { StatusOptions };

export const statusOptionsSchema = z.strictObject({ json: z.boolean() }) satisfies z.ZodType<StatusOptions>;

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
