// `chopin service`: only wires its subcommands (install, status, uninstall).
import { Command } from "commander";
import type { CliContext } from "../program/context";
import type { Run } from "./help";
import { type ServiceInstallOptions, serviceInstallCommand } from "./service/install";
import { type ServiceStatusOptions, serviceStatusCommand } from "./service/status";
import { type ServiceUninstallOptions, serviceUninstallCommand } from "./service/uninstall";

export interface ServiceRunners {
	install?: Run<ServiceInstallOptions>;
	status?: Run<ServiceStatusOptions>;
	uninstall?: Run<ServiceUninstallOptions>;
}

export function serviceCommand(ctx: CliContext, runners: ServiceRunners = {}): Command {
	return new Command("service")
		.description(
			"Run the daemon as a user service: systemd (Linux), launchd (macOS) or Task Scheduler (Windows).",
		)
		.addCommand(serviceInstallCommand(ctx, runners.install))
		.addCommand(serviceStatusCommand(ctx, runners.status))
		.addCommand(serviceUninstallCommand(ctx, runners.uninstall));
}
