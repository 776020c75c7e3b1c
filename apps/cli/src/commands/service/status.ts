// `chopin service status [--json]`: installed or not, running, stopped (and why), or waiting to restart into a new version.
import { Command } from "commander";
import { z } from "zod";
import type { CliContext } from "../../program/context";
import { parseOptions } from "../../program/options";
import type { ServiceDeps } from "../../service/deps";
import { examples, type Run } from "../help";

export const serviceStatusOptionsSchema = z.strictObject({ json: z.boolean() });
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
		.option("--json", "print it as JSON on stdout and nothing else there", false)
		.addHelpText(
			"after",
			examples([
				["Check the service", "chopin service status"],
				["Its state, for a script", "chopin service status --json"],
			]),
		)
		.action(async () => run(parseOptions(serviceStatusOptionsSchema, command.opts(), "service status"), ctx));
}

/** Exit 0 whatever the state: it is a report (the state is in it), not a check. */
export async function runServiceStatus(
	options: ServiceStatusOptions,
	ctx: CliContext,
	deps?: ServiceDeps,
): Promise<void> {
	const { serviceDeps } = await import("../../service/deps");
	const { formatServiceStatus, serviceStatus } = await import("../../service/status");
	const status = await serviceStatus(deps ?? serviceDeps(ctx));
	ctx.stdout.write(options.json ? `${JSON.stringify(status, null, "\t")}\n` : formatServiceStatus(status));
}
