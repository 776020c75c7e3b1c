// `chopin service install`: the daemon as a user service (systemd, launchd, Task Scheduler); the work is service/install.ts.
import { Command } from "commander";
import { z } from "zod";
import type { CliContext } from "../../program/context";
import { parseOptions } from "../../program/options";
import type { ServiceDeps } from "../../service/deps";
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
			examples(
				[["Install the service (again, to pick up a new chopin)", "chopin service install"]],
				"It checks first that the ACP agent, the Planner backend and git resolve under the service's\nPATH, and writes nothing when one does not. A `chopin run` in a terminal is stopped first.",
			),
		)
		.action(async () =>
			run(parseOptions(serviceInstallOptionsSchema, command.opts(), "service install"), ctx),
		);
}

/** `deps` is for tests, which answer the service manager's commands themselves. */
export async function runServiceInstall(
	_options: ServiceInstallOptions,
	ctx: CliContext,
	deps?: ServiceDeps,
): Promise<void> {
	// Loaded when it runs: the other commands start without the service code (docs/install.md § Start-up time).
	const { serviceDeps } = await import("../../service/deps");
	const { installService } = await import("../../service/install");
	await installService(deps ?? serviceDeps(ctx));
}
