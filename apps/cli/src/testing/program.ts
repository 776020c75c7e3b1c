// Runs argv through the real program with every run half replaced by a recorder: tests of the parse halves.

import type { CliContext } from "../program/context";
import { CliError } from "../program/errors";
import { runCli } from "../program/program";

export interface Parsed {
	command: string;
	options: unknown;
}

/** The command and typed options argv parses to, or undefined when parsing ended early (help, version). */
export async function parse(argv: string[], ctx: CliContext): Promise<Parsed | undefined> {
	let parsed: Parsed | undefined;
	const record = (command: string) => async (options: unknown) => {
		parsed = { command, options };
	};
	await runCli(argv, ctx, {
		connect: record("connect"),
		run: record("run"),
		status: record("status"),
		disconnect: record("disconnect"),
		logs: record("logs"),
		service: {
			install: record("service install"),
			status: record("service status"),
			uninstall: record("service uninstall"),
		},
		workspaces: { list: record("workspaces list"), prune: record("workspaces prune") },
	});
	return parsed;
}

/** The CliError argv fails with. */
export async function parseError(argv: string[], ctx: CliContext): Promise<CliError> {
	try {
		await parse(argv, ctx);
	} catch (error) {
		if (error instanceof CliError) return error;
		throw error;
	}
	throw new Error(`expected ${JSON.stringify(argv)} to fail`);
}
