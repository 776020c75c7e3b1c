// `chopin service install`. Parse half only: the service units are a later task.
import { Command } from "commander";
import { z } from "zod";
import type { CliContext } from "../../program/context";
import { CliError } from "../../program/errors";
import { parseOptions } from "../../program/options";
import { examples, type Run } from "../help";

export const serviceInstallOptionsSchema = z.strictObject({});
export type ServiceInstallOptions = z.infer<typeof serviceInstallOptionsSchema>;

export function serviceInstallCommand(
	ctx: CliContext,
	run: Run<ServiceInstallOptions> = runServiceInstall,
): Command {
	const command = new Command("install");
	return command
		.description("Install and start the daemon as a user service that starts at login and after a reboot.")
		.addHelpText(
			"after",
			examples([["Install the service (again, to pick up a new chopin)", "chopin service install"]]),
		)
		.action(async () =>
			run(parseOptions(serviceInstallOptionsSchema, command.opts(), "service install"), ctx),
		);
}

export async function runServiceInstall(_options: ServiceInstallOptions, _ctx: CliContext): Promise<void> {
	throw new CliError(
		"not-implemented",
		"`chopin service install` is not built in this version.",
		"Nothing was changed. Until then, run the daemon with `chopin run`.",
	);
}
