// What every command file shares: the run-half signature and the Examples block of --help.
import type { CliContext } from "../program/context";

/** A command's run half: typed options in, effects through the context. */
export type Run<Options> = (options: Options, ctx: CliContext) => Promise<void>;

/** The "Examples:" block appended to a command's --help, and an optional note after it. */
export function examples(
	items: ReadonlyArray<readonly [description: string, command: string]>,
	note?: string,
): string {
	const lines = items.flatMap(([description, command]) => [`  # ${description}`, `  $ ${command}`]);
	return `\nExamples:\n${lines.join("\n")}\n${note === undefined ? "" : `\n${note}\n`}`;
}
