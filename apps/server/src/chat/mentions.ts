// Whether a Chat message asks the Planner: an @chopin mention in the text Chat shows as prose, never in code.
import { getDefaults, Lexer, type Token } from "marked";
import { LinearTokenizer } from "../documents/blocks";

/** The handle a person writes to ask the Planner. */
export const PLANNER_HANDLE = "chopin";

/**
 * @chopin as a word of its own, in any case: not inside a longer handle or word (@chopin-bot,
 * @chopinx), an e-mail address or path (me@chopin.dev, /@chopin), a team (@chopin/core), or after a
 * backslash that escapes the @. A mention may end a sentence ("@chopin." and "@chopin?").
 */
const MENTION = /(?<![\p{L}\p{N}_.\\/@-])@chopin(?![\p{L}\p{N}_-]|[./][\p{L}\p{N}_])/iu;

/** Tokens whose text Chat shows as code, or not at all. */
const SKIPPED = new Set(["code", "codespan", "def", "space"]);

/**
 * True when body mentions @chopin outside code spans and code blocks (fenced or indented), as
 * marked, the renderer Chat uses, reads them. Text that marked cannot read is scanned as it is.
 */
export function mentionsPlanner(body: string): boolean {
	if (!/@chopin/i.test(body)) return false;
	let tokens: Token[];
	try {
		tokens = new Lexer({ ...getDefaults(), tokenizer: new LinearTokenizer() }).lex(body);
	} catch {
		return MENTION.test(body);
	}
	return MENTION.test(proseOf(tokens));
}

/** Tokens whose children are blocks, each on a line of its own; other containers hold inline text. */
const BLOCK_CONTAINERS = new Set(["blockquote", "list_item"]);

/** The text of the prose tokens, blocks on lines of their own, code left out (a space in its place). */
function proseOf(tokens: readonly Token[]): string {
	const parts: string[] = [];
	const walk = (list: readonly Token[], separator: string) => {
		for (const token of list) {
			if (SKIPPED.has(token.type)) {
				parts.push(" ");
			} else if (token.type === "list") {
				walk(token.items as Token[], "\n");
			} else if (token.type === "table") {
				const cells = [...token.header, ...(token.rows as object[][]).flat()] as { tokens: Token[] }[];
				for (const cell of cells) {
					walk(cell.tokens, "");
					parts.push(" ");
				}
			} else if ("tokens" in token && Array.isArray(token.tokens) && token.tokens.length) {
				walk(token.tokens, BLOCK_CONTAINERS.has(token.type) ? "\n" : "");
			} else {
				parts.push(String(token.raw ?? ""));
			}
			parts.push(separator);
		}
	};
	walk(tokens, "\n");
	return parts.join("");
}
