// `chopin run`: the machine daemon in the foreground (what a service starts). Parse half only; the daemon is the next task.
import { Command } from "commander";
import { z } from "zod";
import type { CliContext } from "../context";
import { CliError } from "../errors";
import { parseOptions } from "../options";
import { examples, type Run } from "./help";

export const runOptionsSchema = z.strictObject({});
export type RunOptions = z.infer<typeof runOptionsSchema>;

export function runCommand(ctx: CliContext, run: Run<RunOptions> = runRun): Command {
	const command = new Command("run");
	return command
		.description(
			"Run the machine daemon in the foreground: serves every checkout in the config until stopped.",
		)
		.addHelpText(
			"after",
			examples([
				["Run the daemon in this terminal (Ctrl-C stops it)", "chopin run"],
				["Log more while investigating a problem", "CHOPIN_LOG_LEVEL=debug chopin run"],
			]),
		)
		.action(async () => run(parseOptions(runOptionsSchema, command.opts(), "run"), ctx));
}

export async function runRun(_options: RunOptions, _ctx: CliContext): Promise<void> {
	throw new CliError(
		"not-implemented",
		"`chopin run` cannot start the daemon yet: the machine connection is not built in this version.",
		"Nothing was started.",
	);
}
