// `chopin stop`: stop the running daemon without revoking anything (the machine stays paired, its credential, config
// and workspaces stay); idempotent: nothing running is fine.
import { Command } from "commander";
import { z } from "zod";
import type { CliContext } from "../program/context";
import { parseOptions } from "../program/options";
import type { ServiceDeps } from "../service/deps";
import { examples, type Run } from "./help";

export const stopOptionsSchema = z.strictObject({});
export type StopOptions = z.infer<typeof stopOptionsSchema>;

export function stopCommand(ctx: CliContext, run: Run<StopOptions> = runStop): Command {
	const command = new Command("stop");
	return command
		.description("Stop the running chopin daemon (or its service) without unpairing this machine.")
		.addHelpText(
			"after",
			examples(
				[["Stop the daemon; `chopin run` or the service starts it again", "chopin stop"]],
				"Its runs and Planner backends stop with it (their workspaces stay). An installed service stays installed\nand starts again at the next login. To unpair the machine as well, use `chopin disconnect`.",
			),
		)
		.action(async () => run(parseOptions(stopOptionsSchema, command.opts(), "stop"), ctx));
}

export async function runStop(_options: StopOptions, ctx: CliContext): Promise<void> {
	const stopped = await stopMachineDaemon(ctx);
	if (!stopped) ctx.stderr.write("No chopin daemon is running.\n");
}

/**
 * Stops the machine's daemon, whoever started it, and says what it stopped; false when nothing ran. An installed
 * service is asked first, through its manager: a service's daemon stopped through its socket alone exits 0, which
 * systemd's Restart=always starts again. Then the control socket, for a daemon started in a terminal (or one the
 * manager no longer knew about). Used by `chopin stop` and `chopin disconnect`.
 */
export async function stopMachineDaemon(ctx: CliContext, service?: ServiceDeps): Promise<boolean> {
	// Loaded when it runs: the other commands start without the daemon's and the service's modules
	// (docs/install.md § Start-up time).
	const [{ stopDaemon }, { stopInstalledService }, { serviceDeps }, { serviceDescription }] =
		await Promise.all([
			import("../daemon/stop-daemon"),
			import("../service/stop"),
			import("../service/deps"),
			import("../service/names"),
		]);
	const deps = service ?? serviceDeps(ctx);
	const viaService = await stopInstalledService(deps);
	if (viaService.stopped) {
		ctx.stderr.write(
			`Stopped the chopin service (${serviceDescription(viaService.manager)}); it stays installed and starts again at the next login.\n`,
		);
	}
	const outcome = await stopDaemon(ctx);
	if (outcome.stopped) ctx.stderr.write(`Stopped the chopin daemon (pid ${outcome.pid}).\n`);
	return viaService.stopped || outcome.stopped;
}
