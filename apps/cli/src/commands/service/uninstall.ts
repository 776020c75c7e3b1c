// `chopin service uninstall`: stop the service gracefully and remove it; the work is service/uninstall.ts.
import { Command } from "commander";
import { z } from "zod";
import type { CliContext } from "../../program/context";
import { parseOptions } from "../../program/options";
import type { ServiceDeps } from "../../service/deps";
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
		.addHelpText(
			"after",
			examples(
				[["Remove the service", "chopin service uninstall"]],
				"Running it when no service is installed does nothing and succeeds.",
			),
		)
		.action(async () =>
			run(parseOptions(serviceUninstallOptionsSchema, command.opts(), "service uninstall"), ctx),
		);
}

/** `deps` is for tests, which answer the service manager's commands themselves. */
export async function runServiceUninstall(
	_options: ServiceUninstallOptions,
	ctx: CliContext,
	deps?: ServiceDeps,
): Promise<void> {
	// Loaded when it runs: the other commands start without the service code (docs/install.md § Start-up time).
	const { serviceDeps } = await import("../../service/deps");
	const { uninstallService } = await import("../../service/uninstall");
	await uninstallService(deps ?? serviceDeps(ctx));
}
