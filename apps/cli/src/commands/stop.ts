// `chopin stop`: stop the running daemon without revoking anything (the machine stays paired, its credential, config
// and workspaces stay); idempotent: nothing running is fine.
import { Command } from "commander";
import { z } from "zod";
import type { CliContext } from "../program/context";
import { parseOptions } from "../program/options";
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
				"Its runs and Planner backends stop with it (their workspaces stay). To unpair the machine as well, use\n`chopin disconnect`.",
			),
		)
		.action(async () => run(parseOptions(stopOptionsSchema, command.opts(), "stop"), ctx));
}

export async function runStop(_options: StopOptions, ctx: CliContext): Promise<void> {
	// Loaded when it runs: the other commands start without the daemon's modules (docs/install.md § Start-up time).
	const { stopDaemon } = await import("../daemon/stop-daemon");
	const outcome = await stopDaemon(ctx);
	ctx.stderr.write(
		outcome.stopped ? `Stopped the chopin daemon (pid ${outcome.pid}).\n` : "No chopin daemon is running.\n",
	);
}
