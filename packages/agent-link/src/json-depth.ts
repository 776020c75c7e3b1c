/**
 * A nesting limit for JSON read from anyone else, checked on the text before JSON.parse with a
 * loop and a counter (no recursion). JSON.parse itself copes with any depth, but what walks the
 * value next (zod's schema parse, a renderer) recurses: 9,000 nested arrays overflowed the stack
 * and closed an agent link 1011 instead of refusing the frame. No message of ours comes near 128.
 */

/** The most arrays and objects JSON may nest: `{}` is depth 1, `{"a":[1]}` depth 2. */
export const MAX_JSON_DEPTH = 128;

/** One sentence for a refusal, the same wherever the limit is applied. */
export const JSON_TOO_DEEP_MESSAGE = `The JSON nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * True when JSON text nests arrays and objects deeper than max. Brackets inside strings do not
 * count. Text that is not JSON gets an answer too; JSON.parse refuses it afterwards anyway.
 * One pass, stopping as soon as the limit is passed; strings are skipped with indexOf.
 */
export function exceedsJsonDepth(text: string, max: number = MAX_JSON_DEPTH): boolean {
	if (atMostOpeners(text, max)) return false;
	let depth = 0;
	for (let i = 0; i < text.length; i++) {
		const c = text.charCodeAt(i);
		if (c === QUOTE) {
			i = closingQuote(text, i);
			if (i < 0) return false;
		} else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
			if (++depth > max) return true;
		} else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
			depth--;
		}
	}
	return false;
}

/**
 * True when the text holds at most `max` brackets and braces that open: it cannot nest deeper. Counted with indexOf
 * (native), so a short line, such as the daemon's status answer to `chopin status`, is not walked character by
 * character: that loop's 500-odd turns made the engine start its JIT thread to compile it (docs/performance.md).
 */
function atMostOpeners(text: string, max: number): boolean {
	let count = 0;
	for (const opener of ["[", "{"]) {
		for (let at = text.indexOf(opener); at >= 0; at = text.indexOf(opener, at + 1)) {
			if (++count > max) return false;
		}
	}
	return true;
}

/** The index of the quote that ends the string opened at `open`, or -1 when it is never closed. */
function closingQuote(text: string, open: number): number {
	for (let at = text.indexOf('"', open + 1); at >= 0; at = text.indexOf('"', at + 1)) {
		// Escaped when an odd number of backslashes come right before it. Each run of backslashes
		// is counted for the one quote after it, so the whole scan stays linear.
		let backslashes = 0;
		while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
		if (backslashes % 2 === 0) return at;
	}
	return -1;
}

export type JsonReading = { ok: true; value: unknown } | { ok: false; reason: "too-deep" | "invalid" };

/** JSON.parse within the limit: too-deep before anything is parsed, invalid for text that is not JSON. */
export function parseJsonWithin(text: string, max: number = MAX_JSON_DEPTH): JsonReading {
	if (exceedsJsonDepth(text, max)) return { ok: false, reason: "too-deep" };
	try {
		return { ok: true, value: JSON.parse(text) };
	} catch {
		return { ok: false, reason: "invalid" };
	}
}
