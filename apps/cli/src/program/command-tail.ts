// A commander command that keeps the words after `--` apart (connect's ACP command), instead of mixing them into its arguments.
import { Command, type Option } from "commander";

/**
 * Splits args at the first `--` that is not an option's value (`--label -- x` names a label
 * "--"). `tail` is undefined when there is no `--` at all, and [] when nothing follows it.
 */
export function splitAtDoubleDash(
	args: readonly string[],
	options: readonly Option[],
): { head: string[]; tail: string[] | undefined } {
	for (let i = 0; i < args.length; i++) {
		const arg = args[i]!;
		if (arg === "--") return { head: args.slice(0, i), tail: args.slice(i + 1) };
		if (!arg.startsWith("-") || arg.includes("=")) continue;
		const option = options.find((o) => o.long === arg || o.short === arg);
		// A required value is the next word, whatever it looks like (commander reads it so too).
		if (option?.required) i++;
		else if (option?.optional && i + 1 < args.length && !args[i + 1]!.startsWith("-")) i++;
	}
	return { head: [...args], tail: undefined };
}

/**
 * commander hands a subcommand the words after its name when the program uses positional
 * options; this override sets the tail aside before commander sees the rest, so
 * `connect ./repo -- gemini --acp` is the checkout ./repo and the command `gemini --acp`.
 */
export class CommandWithTail extends Command {
	tail: string[] | undefined;

	override parseOptions(args: string[]): { operands: string[]; unknown: string[] } {
		const { head, tail } = splitAtDoubleDash(args, this.options);
		this.tail = tail;
		return super.parseOptions(head);
	}

	override createCommand(name?: string): Command {
		return new Command(name);
	}
}
