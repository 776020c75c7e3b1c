// `chopin disconnect`: stop the daemon, revoke this machine on the server, forget the credential; idempotent, and offline too.
import { Command } from "commander";
import { z } from "zod";
import { type Credential, deleteCredential, loadCredential } from "../machine/credential";
import type { CliContext } from "../program/context";
import { CliError } from "../program/errors";
import { parseOptions } from "../program/options";
import { examples, type Run } from "./help";
import { stopMachineDaemon } from "./stop";

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
 * Idempotent (STYLE 8): stops the daemon (first, so it exits 0 instead of hearing its own
 * revocation), revokes the machine on the server (an already revoked one counts as done),
 * and deletes the credential. Offline, the local credential still goes, with a warning.
 */
export async function runDisconnect(_options: DisconnectOptions, ctx: CliContext): Promise<void> {
	await stopFirst(ctx);
	let credential: Credential | undefined;
	try {
		credential = loadCredential(ctx);
	} catch (error) {
		if (!(error instanceof CliError) || error.code !== "credential-invalid") throw error;
		deleteCredential(ctx);
		ctx.stderr.write(
			`warning: ${error.message} Deleted it without revoking the machine: disconnect it on the server's Machines page.\n`,
		);
		return;
	}
	if (!credential) {
		ctx.stderr.write("This machine is not paired; there is nothing to disconnect.\n");
		return;
	}
	// Loaded only here: the other commands start without the server API (docs/install.md § Start-up time).
	const { ServerApi } = await import("../server-link/server-api");
	const api = new ServerApi(ctx, credential.server);
	try {
		await api.revoke(credential.token);
		ctx.stderr.write(`Revoked this machine on ${credential.server}.\n`);
	} catch (error) {
		if (!(error instanceof CliError) || error.code === "interrupted") throw error;
		if (error.code === "machine-revoked") {
			ctx.stderr.write(`${credential.server} had already revoked this machine.\n`);
		} else {
			const why = error.code === "server-unreachable" ? "could not reach" : "was refused by";
			ctx.stderr.write(
				`warning: ${why} ${credential.server} to revoke this machine (${error.message.replace(/\.$/, "")}); it stays listed there until you disconnect it on the Machines page.\n`,
			);
		}
	}
	deleteCredential(ctx);
	ctx.log.info({ server: credential.server, machine: credential.machineId }, "disconnected");
	ctx.stderr.write(`Deleted the credential ${ctx.paths.credentialFile}; machine.json and worktrees stay.\n`);
}

/**
 * The daemon goes first, so it exits 0 instead of hearing its own revocation; no daemon is fine. An installed service
 * is stopped through its manager and stays installed: started again at the next login without a credential, its daemon
 * ends as not paired, an exit its manager does not restart after.
 */
async function stopFirst(ctx: CliContext): Promise<void> {
	try {
		await stopMachineDaemon(ctx);
	} catch (error) {
		// Neither a slow daemon nor a service manager that refused the stop keeps the machine from being unpaired.
		if (!(error instanceof CliError) || !["daemon-stop-timeout", "service-failed"].includes(error.code))
			throw error;
		ctx.stderr.write(`warning: ${error.message}\n`);
	}
}
