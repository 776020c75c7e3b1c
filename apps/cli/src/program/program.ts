// The `chopin` command tree (commander), made testable: output goes to the context's writers and parse errors become CliErrors.
import { Command, CommanderError } from "commander";
import { type BridgeOptions, bridgeCommand } from "../commands/bridge";
import { type ConnectOptions, connectCommand } from "../commands/connect";
import { type DisconnectOptions, disconnectCommand } from "../commands/disconnect";
import type { Run } from "../commands/help";
import { examples } from "../commands/help";
import { type LogsOptions, logsCommand } from "../commands/logs";
import { type RunOptions, runCommand } from "../commands/run";
import { type ServiceRunners, serviceCommand } from "../commands/service";
import { type StatusOptions, statusCommand } from "../commands/status";
import { type StopOptions, stopCommand } from "../commands/stop";
import { type WorkspacesRunners, workspacesCommand } from "../commands/workspaces";
import type { CliContext } from "./context";
import { CliError, sentence } from "./errors";

/** Replacement run halves, so a test can check what the parse half produced (GitHub CLI's runF). */
export interface Runners {
	connect?: Run<ConnectOptions>;
	run?: Run<RunOptions>;
	status?: Run<StatusOptions>;
	stop?: Run<StopOptions>;
	disconnect?: Run<DisconnectOptions>;
	logs?: Run<LogsOptions>;
	service?: ServiceRunners;
	workspaces?: WorkspacesRunners;
	bridge?: Run<BridgeOptions>;
}

export function buildProgram(ctx: CliContext, runners: Runners = {}): Command {
	const program = new Command("chopin")
		.description("Make this computer a Chopin machine: paired once, serving builds and Planner backends.")
		.version(ctx.version, "-V, --version", "print chopin's version")
		// Options belong to the command they follow, so connect's `--` tail reaches connect untouched.
		.enablePositionalOptions()
		.addCommand(connectCommand(ctx, runners.connect))
		.addCommand(runCommand(ctx, runners.run))
		.addCommand(statusCommand(ctx, runners.status))
		.addCommand(stopCommand(ctx, runners.stop))
		.addCommand(disconnectCommand(ctx, runners.disconnect))
		.addCommand(logsCommand(ctx, runners.logs))
		.addCommand(workspacesCommand(ctx, runners.workspaces))
		.addCommand(serviceCommand(ctx, runners.service))
		// Plumbing a run's agent starts, not a command for people: documented in docs/cli.md, left out of --help.
		.addCommand(bridgeCommand(ctx, runners.bridge), { hidden: true })
		.addHelpText(
			"after",
			examples([
				[
					"Pair this machine and serve the current checkout",
					"chopin connect --server https://chopin.example -- gemini --acp",
				],
				["See what it is doing", "chopin status"],
				["Keep it running after logout and reboot", "chopin service install"],
			]),
		);
	configureTree(program, ctx);
	return program;
}

/**
 * Parses argv (the user's words, without the binary) and runs the chosen command. Help and
 * --version return normally; every other way out is a thrown error for `main` to turn into
 * an exit code.
 */
export async function runCli(argv: readonly string[], ctx: CliContext, runners: Runners = {}): Promise<void> {
	const program = buildProgram(ctx, runners);
	if (argv.length === 0) {
		// Bare `chopin` is a request for help, not a mistake.
		program.outputHelp();
		return;
	}
	try {
		await program.parseAsync([...argv], { from: "user" });
	} catch (error) {
		if (!(error instanceof CommanderError)) throw error;
		if (error.code === "commander.helpDisplayed" || error.code === "commander.version") return;
		// `chopin help <command>` asked for help (exit 0); a group with no subcommand did not (exit 1).
		if (error.code === "commander.help" && error.exitCode === 0) return;
		throw usageError(error, argv, program);
	}
}

/** commander's settings do not pass to commands built on their own, so each one gets them here. */
function configureTree(command: Command, ctx: CliContext): void {
	command
		.exitOverride()
		.allowExcessArguments(false)
		.showSuggestionAfterError(true)
		.configureOutput({
			writeOut: (text) => ctx.stdout.write(text),
			writeErr: (text) => ctx.stderr.write(text),
			// main prints the error once, as `error: ...` with a hint; commander must not print it too.
			outputError: () => {},
			getOutHelpWidth: () => ctx.stdout.columns ?? 100,
			getErrHelpWidth: () => ctx.stderr.columns ?? 100,
			getOutHasColors: () => false,
			getErrHasColors: () => false,
		});
	for (const sub of command.commands) configureTree(sub, ctx);
}

function usageError(error: CommanderError, argv: readonly string[], program: Command): CliError {
	const path = commandPath(argv, program);
	const help = `Run \`${["chopin", ...path, "--help"].join(" ")}\` for usage.`;
	if (error.code === "commander.help") {
		// A command group (`chopin service`) was given no subcommand; commander printed its help.
		return new CliError("usage", `\`${["chopin", ...path].join(" ")}\` needs a subcommand.`, help);
	}
	// commander appends "(Did you mean --label?)" on a second line: that is a hint, not the error.
	const [first = "", ...more] = error.message.replace(/^error:\s*/i, "").split("\n");
	const suggestion = /\(Did you mean (.+)\?\)/.exec(more.join(" "))?.[1];
	let message = sentence(first);
	let hint = suggestion ? `Did you mean ${suggestion}? ${help}` : help;
	if (error.code === "commander.unknownOption" && path[0] === "connect" && !suggestion) {
		hint = "Put the ACP agent's command after `--`, for example: chopin connect -- gemini --acp";
	}
	if (error.code === "commander.excessArguments" && path[0] === "connect") {
		message = "`chopin connect` takes one checkout; the rest of an ACP command goes after `--`.";
		hint = "Put the ACP agent's command after `--`, for example: chopin connect -- gemini --acp";
	}
	return new CliError("usage", message, hint);
}

/** The subcommand names at the front of argv (`service install`), for the hint. */
function commandPath(argv: readonly string[], program: Command): string[] {
	const path: string[] = [];
	let command = program;
	for (const word of argv) {
		const sub = command.commands.find((c) => c.name() === word);
		if (!sub) break;
		path.push(word);
		command = sub;
	}
	return path;
}
