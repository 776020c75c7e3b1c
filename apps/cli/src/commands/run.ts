// `chopin run`: the machine daemon in the foreground (what a service starts); the daemon itself is daemon/daemon.ts.
import { Command } from "commander";
import { z } from "zod";
import type { CliContext } from "../program/context";
import { parseOptions } from "../program/options";
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
			examples(
				[
					["Run the daemon in this terminal (Ctrl-C stops it)", "chopin run"],
					["Log more while investigating a problem", "CHOPIN_LOG_LEVEL=debug chopin run"],
				],
				"It reconnects by itself after network failures and server restarts. It stops for good, with\nexit 10 (revoked), 11 (repository access lost), 12 (upgrade needed), 13 (pair again) or\n15 (another chopin process took this machine over); Ctrl-C and `chopin disconnect` end it with 0.",
			),
		)
		.action(async () => run(parseOptions(runOptionsSchema, command.opts(), "run"), ctx));
}

/** Serves until stopped (exit 0) or until the server refuses the machine for good (exit 10 to 13, 15). */
export async function runRun(_options: RunOptions, ctx: CliContext): Promise<void> {
	// Loaded when it runs: the other commands start without the daemon (docs/install.md § Start-up time).
	const { runDaemon } = await import("../daemon/daemon");
	await runDaemon(ctx);
}
