// `chopin bridge`: the stdio MCP bridge a run's ACP agent starts when it cannot reach Chopin's /mcp over HTTP. Not
// for people: the daemon names it in the agent's session, with the server and the run's credential in its environment.
import { Command } from "commander";
import { z } from "zod";
import type { CliContext } from "../program/context";
import { CliError } from "../program/errors";
import { parseOptions } from "../program/options";
import { examples, type Run } from "./help";

export const bridgeOptionsSchema = z.strictObject({});
export type BridgeOptions = z.infer<typeof bridgeOptionsSchema>;

export function bridgeCommand(ctx: CliContext, run: Run<BridgeOptions> = runBridgeCommand): Command {
	const command = new Command("bridge");
	return command
		.description(
			"Serve Chopin's MCP tools on stdin/stdout for a run's coding agent (the daemon starts it; it reads CHOPIN_URL and CHOPIN_RUN_TOKEN).",
		)
		.addHelpText(
			"after",
			examples(
				[["What a run's agent starts (with both variables in its environment)", "chopin bridge"]],
				"The daemon names it in the agent's session when the agent cannot reach Chopin's MCP server over HTTP.",
			),
		)
		.action(async () => run(parseOptions(bridgeOptionsSchema, command.opts(), "bridge"), ctx));
}

export async function runBridgeCommand(_options: BridgeOptions, ctx: CliContext): Promise<void> {
	const server = ctx.env.CHOPIN_URL;
	const token = ctx.env.CHOPIN_RUN_TOKEN;
	if (!server || !token) {
		throw new CliError(
			"bridge-env-missing",
			"`chopin bridge` needs CHOPIN_URL and CHOPIN_RUN_TOKEN in its environment.",
			"A run's coding agent starts it with both; there is no need to run it by hand.",
		);
	}
	ctx.secrets.add(token);
	const { runBridge } = await import("../bridge/bridge");
	await runBridge({
		server,
		token,
		version: ctx.version,
		input: ctx.stdin.stream,
		write: (text) => ctx.stdout.write(text),
		fetch: ctx.fetch,
		warn: (text) => ctx.stderr.write(`${ctx.secrets.redact(text)}\n`),
	});
}
