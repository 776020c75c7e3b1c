// `chopin disconnect`: revoke this machine and stop its daemon; succeeds when there is nothing to disconnect.
import { Command } from "commander";
import { z } from "zod";
import type { CliContext } from "../context";
import { describeCredential } from "../credential";
import { CliError } from "../errors";
import { parseOptions } from "../options";
import { examples, type Run } from "./help";

export const disconnectOptionsSchema = z.strictObject({});
export type DisconnectOptions = z.infer<typeof disconnectOptionsSchema>;

export function disconnectCommand(ctx: CliContext, run: Run<DisconnectOptions> = runDisconnect): Command {
	const command = new Command("disconnect");
	return command
		.description(
			"Revoke this machine's pairing, stop its daemon and forget its credential (config and worktrees stay).",
		)
		.addHelpText(
			"after",
			examples(
				[["Unpair this machine", "chopin disconnect"]],
				"Running it when the machine is not paired does nothing and succeeds.",
			),
		)
		.action(async () => run(parseOptions(disconnectOptionsSchema, command.opts(), "disconnect"), ctx));
}

/**
 * Idempotent (STYLE 8): with no credential stored there is nothing to revoke and it succeeds.
 * Revoking a stored credential needs the server, which is the next task: until then it says so
 * and leaves the credential in place rather than forgetting a pairing the server still honours.
 */
export async function runDisconnect(_options: DisconnectOptions, ctx: CliContext): Promise<void> {
	const credential = describeCredential({
		paths: ctx.paths,
		platform: ctx.platform,
		secrets: ctx.secrets,
		log: ctx.log,
	});
	if (!credential.stored) {
		ctx.stderr.write("This machine is not paired; there is nothing to disconnect.\n");
		return;
	}
	throw new CliError(
		"not-implemented",
		"`chopin disconnect` cannot revoke the pairing yet: revocation is not built in this version.",
		"Nothing was changed; the credential is still stored.",
	);
}
