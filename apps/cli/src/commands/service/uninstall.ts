// `chopin service uninstall`. Parse half only: the service units are a later task.
import { Command } from "commander";
import { z } from "zod";
import type { CliContext } from "../../program/context";
import { CliError } from "../../program/errors";
import { parseOptions } from "../../program/options";
import { examples, type Run } from "../help";

export const serviceUninstallOptionsSchema = z.strictObject({});
export type ServiceUninstallOptions = z.infer<typeof serviceUninstallOptionsSchema>;

export function serviceUninstallCommand(
	ctx: CliContext,
	run: Run<ServiceUninstallOptions> = runServiceUninstall,
): Command {
	const command = new Command("uninstall");
	return command
		.description("Stop and remove the service; the credential, config and worktrees stay.")
		.addHelpText("after", examples([["Remove the service", "chopin service uninstall"]]))
		.action(async () =>
			run(parseOptions(serviceUninstallOptionsSchema, command.opts(), "service uninstall"), ctx),
		);
}

export async function runServiceUninstall(
	_options: ServiceUninstallOptions,
	_ctx: CliContext,
): Promise<void> {
	throw new CliError(
		"not-implemented",
		"`chopin service uninstall` is not built in this version.",
		"Nothing was changed. Until then, run the daemon with `chopin run`.",
	);
}
