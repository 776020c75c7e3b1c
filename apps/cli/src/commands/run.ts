// `chopin run`: the machine daemon in the foreground (what a service starts); the daemon itself is daemon/daemon.ts.
import { Command, Option } from "commander";
import { z } from "zod";
import type { CliContext } from "../program/context";
import { toCliError } from "../program/errors";
import { parseOptions } from "../program/options";
import { examples, type Run } from "./help";

export const runOptionsSchema = z.strictObject({
	/** The service manager that starts this daemon (the unit, plist or task says so): how it must end. */
	service: z.enum(["systemd", "launchd", "task"]).optional(),
});
export type RunOptions = z.infer<typeof runOptionsSchema>;

export function runCommand(ctx: CliContext, run: Run<RunOptions> = runRun): Command {
	const command = new Command("run");
	return command
		.description(
			"Run the machine daemon in the foreground: serves every checkout in the config until stopped.",
		)
		.addOption(
			new Option(
				"--service <manager>",
				"how a user service runs it (written into the unit, plist or task by `chopin service install`)",
			).choices(["systemd", "launchd", "task"]),
		)
		.addHelpText(
			"after",
			examples(
				[
					["Run the daemon in this terminal (Ctrl-C stops it)", "chopin run"],
					["Log more while investigating a problem", "CHOPIN_LOG_LEVEL=debug chopin run"],
				],
				"It reconnects by itself after network failures and server restarts. It stops for good, with\nexit 3 (not paired), 10 (revoked), 11 (repository access lost), 12 (upgrade needed), 13 (pair\nagain) or 15 (another chopin process took this machine over); Ctrl-C and `chopin stop` end it with 0.",
			),
		)
		.action(async () => run(parseOptions(runOptionsSchema, command.opts(), "run"), ctx));
}

/** Serves until stopped (exit 0) or until the server refuses the machine for good (exit 3, 10 to 13, 15). */
export async function runRun(options: RunOptions, ctx: CliContext): Promise<void> {
	// Loaded when it runs: the other commands start without the daemon (docs/install.md § Start-up time).
	const { runDaemon } = await import("../daemon/daemon");
	const { FINAL_EXIT_CODES } = await import("../service/names");
	const { serviceOutput } = await import("../daemon/service-output");
	const service = options.service;
	// Task Scheduler keeps no output: the daemon appends its own to the service's log.
	const context = service === "task" ? serviceOutput(ctx) : ctx;
	try {
		await runDaemon(context, { ...(service && { service }) });
	} catch (thrown) {
		const error = toCliError(thrown);
		// launchd (KeepAlive: SuccessfulExit false) and Task Scheduler (RestartOnFailure) start again after any
		// failure, so a final refusal ends with 0 under them; the reason is recorded (daemon-exit.json) and said here.
		if (service !== "launchd" && service !== "task") throw error;
		if (!FINAL_EXIT_CODES.includes(error.exitCode)) throw error;
		context.stderr.write(`error: ${ctx.secrets.redact(error.message)}\n`);
		if (error.hint) context.stderr.write(`hint: ${ctx.secrets.redact(error.hint)}\n`);
		context.stderr.write(
			`Stopped for good (exit ${error.exitCode}, ended with 0 so that ${service} does not start it again).\n`,
		);
		return;
	}
}
