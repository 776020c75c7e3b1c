/**
 * Splits --planner-command into words as a POSIX shell would, without expanding anything, and
 * reads CHOPIN_PLANNER_COMMAND's JSON form. The words are exec'd directly, never by a shell.
 *
 * Rules (POSIX "Token Recognition" and "Quoting", minus every expansion):
 * - Words are separated by unquoted spaces, tabs and newlines; quotes may start or end
 *   anywhere in a word (`--label="two words"` is the one word `--label=two words`).
 * - '...' keeps everything literally, backslashes included.
 * - "..." keeps everything literally except `\` before one of `$ \` " \` and newline, which
 *   escapes it (a backslash-newline pair disappears); any other backslash stays.
 * - Outside quotes `\x` is a literal x, `\`-newline joins lines, and a lone final `\` stays.
 * - `$VAR`, `$(...)`, backquotes, `~`, globs and `#` are kept as literal text: nothing expands.
 * - Unquoted shell operators `| & ; < > ( )` are refused (planner-command-operator) rather than
 *   passed on as arguments: a shell would have run a pipeline or a redirect, and silently
 *   doing something else is worse than saying so. Quote them to mean the character.
 * - An unclosed quote is refused (planner-command-unmatched-quote); so is an empty result or
 *   an empty word (planner-command-empty), matching the JSON form's non-empty strings.
 */
import { z } from "zod";
import { CliError } from "./errors";

const SEPARATORS = new Set([" ", "\t", "\n"]);
const OPERATORS = new Set(["|", "&", ";", "<", ">", "(", ")"]);
const DOUBLE_QUOTE_ESCAPABLE = new Set(["$", "`", '"', "\\", "\n"]);

/** A command's words: at least one, each a non-empty string without NUL (argv cannot hold one). */
export const commandWordsSchema = z
	.array(
		z
			.string()
			.min(1, "a word is empty")
			.refine((word) => !word.includes("\0"), "a word contains a NUL character"),
	)
	.min(1, "the command has no words");

export type CommandWords = z.infer<typeof commandWordsSchema>;

const OPERATOR_HINT =
	"chopin runs the command directly, without a shell. Quote the character to pass it literally, or put the pipeline in a script (or `sh -c '...'`).";

/** Which command is split: its error codes (`planner-command-*`, `acp-command-*`) and how messages name it. */
export type CommandKind = "planner" | "acp";

const LABEL: Record<CommandKind, string> = { planner: "planner command", acp: "ACP command" };

/** Splits a command line into words, or throws a CliError with one of the kind's command codes. */
export function splitCommandLine(input: string, kind: CommandKind = "planner"): CommandWords {
	const label = LABEL[kind];
	if (input.includes("\0")) {
		throw new CliError(`${kind}-command-invalid`, `The ${label} contains a NUL character.`);
	}
	const words: string[] = [];
	let word = "";
	// A word exists once anything (even an empty pair of quotes) has been seen for it.
	let inWord = false;
	let i = 0;
	while (i < input.length) {
		const ch = input[i]!;
		if (SEPARATORS.has(ch)) {
			if (inWord) words.push(word);
			word = "";
			inWord = false;
			i++;
		} else if (ch === "'") {
			const end = input.indexOf("'", i + 1);
			if (end < 0) throw unmatched("'", i, kind);
			word += input.slice(i + 1, end);
			inWord = true;
			i = end + 1;
		} else if (ch === '"') {
			const start = i;
			i++;
			let closed = false;
			while (i < input.length) {
				const c = input[i]!;
				if (c === '"') {
					closed = true;
					i++;
					break;
				}
				if (c === "\\" && i + 1 < input.length && DOUBLE_QUOTE_ESCAPABLE.has(input[i + 1]!)) {
					if (input[i + 1] !== "\n") word += input[i + 1];
					i += 2;
					continue;
				}
				word += c;
				i++;
			}
			if (!closed) throw unmatched('"', start, kind);
			inWord = true;
		} else if (ch === "\\") {
			if (i + 1 >= input.length) {
				// A lone final backslash has nothing to escape: keep it, as sh -c does.
				word += "\\";
				inWord = true;
				i++;
			} else if (input[i + 1] === "\n") {
				i += 2; // line continuation: neither character is part of any word
			} else {
				word += input[i + 1];
				inWord = true;
				i += 2;
			}
		} else if (OPERATORS.has(ch)) {
			throw new CliError(
				`${kind}-command-operator`,
				`The ${label} has an unquoted ${JSON.stringify(ch)} at position ${i + 1}, which a shell would treat as an operator.`,
				OPERATOR_HINT,
			);
		} else {
			word += ch;
			inWord = true;
			i++;
		}
	}
	if (inWord) words.push(word);
	if (words.length === 0) {
		throw new CliError(
			`${kind}-command-empty`,
			`The ${label} is empty.`,
			kind === "planner"
				? 'Pass the command to run, for example --planner-command "my-planner --flag".'
				: "Name the ACP agent's command after `--`, for example: chopin connect -- gemini --acp",
		);
	}
	if (words.some((w) => w === "")) {
		throw new CliError(
			`${kind}-command-empty`,
			`The ${label} has an empty word (a pair of quotes with nothing in them).`,
			"Remove the empty quotes; an empty argument cannot be passed to a command.",
		);
	}
	return words;
}

function unmatched(quote: string, position: number, kind: CommandKind): CliError {
	const name = quote === "'" ? "single" : "double";
	return new CliError(
		`${kind}-command-unmatched-quote`,
		`The ${LABEL[kind]} has an unmatched ${name} quote (${quote}) at position ${position + 1}.`,
		`Close the quote, or escape it as \\${quote} to mean the character itself.`,
	);
}

/**
 * CHOPIN_PLANNER_COMMAND: a JSON array of non-empty strings, for commands that are awkward to
 * quote. `undefined` when the variable is unset or empty.
 */
export function plannerCommandFromEnv(value: string | undefined): CommandWords | undefined {
	if (value === undefined || value.trim() === "") return undefined;
	let json: unknown;
	try {
		json = JSON.parse(value);
	} catch {
		throw new CliError("planner-command-invalid", "CHOPIN_PLANNER_COMMAND is not valid JSON.", ENV_HINT);
	}
	const parsed = commandWordsSchema.safeParse(json);
	if (!parsed.success) {
		const issue = parsed.error.issues[0];
		const detail =
			issue?.code === "invalid_type" ? "is not an array of strings" : (issue?.message ?? "is not valid");
		throw new CliError(
			"planner-command-invalid",
			`CHOPIN_PLANNER_COMMAND ${sentenceTail(detail)}.`,
			ENV_HINT,
		);
	}
	return parsed.data;
}

const ENV_HINT = 'Set it to a JSON array of non-empty strings, for example ["my-planner","--flag"].';

function sentenceTail(detail: string): string {
	return /^(is|has)\b/.test(detail) ? detail : `is not valid: ${detail}`;
}
