// `chopin service status`. Parse half only: the service units are a later task.
import { Command } from "commander";
import { z } from "zod";
import type { CliContext } from "../../program/context";
import { CliError } from "../../program/errors";
import { parseOptions } from "../../program/options";
import { examples, type Run } from "../help";

export const serviceStatusOptionsSchema = z.strictObject({});
export type ServiceStatusOptions = z.infer<typeof serviceStatusOptionsSchema>;

export function serviceStatusCommand(
	ctx: CliContext,
	run: Run<ServiceStatusOptions> = runServiceStatus,
): Command {
	const command = new Command("status");
	return command
		.description(
			"Say whether the service is installed, running, stopped, or waiting to restart into a new version.",
		)
		.addHelpText("after", examples([["Check the service", "chopin service status"]]))
		.action(async () => run(parseOptions(serviceStatusOptionsSchema, command.opts(), "service status"), ctx));
}

export async function runServiceStatus(_options: ServiceStatusOptions, _ctx: CliContext): Promise<void> {
	throw new CliError(
		"not-implemented",
		"`chopin service status` is not built in this version.",
		"Nothing was changed. Until then, run the daemon with `chopin run`.",
	);
}
