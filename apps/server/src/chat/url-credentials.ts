// The spec's deliberately broad URL-credential rule, on its own because reading every spelling of
// ":", "/" and "@" that a URL parser or a later decoding step accepts is most of the work.
//
// After a separator (a colon then two slashes, or a protocol-relative pair of slashes that starts the
// text or follows whitespace, a quote, ( < = [ , or :), the LAST at-sign among the next 8,192
// characters, and before the first whitespace (where the URL ends), is found and everything between is
// masked. Linear passes list the at-signs and the whitespace, another finds the separators, and binary
// searches pick each one's end and at-sign: no regex backtracks over the text.

export const URL_CREDENTIAL_WINDOW = 8192;

/** Separator and at-sign spellings behind one or more backslashes: JSON, JavaScript, Python and C. */
const ESCAPE_BODY =
	/(?:(u0040|u\{0*40\}|u00000040|x40|100)|(u003a|u\{0*3a\}|u0000003a|x3a|0?72)|(u00(?:2f|5c)|u\{0*(?:2f|5c)\}|u000000(?:2f|5c)|x(?:2f|5c)|0?57|134))/iy;

/**
 * After "%" and any run of "25" (percent-encoding at any depth: %40, %2540, %252540, ...), the hex of
 * the symbol, or JavaScript's u0040 form. The run is skipped by hand so no regex backtracks over it.
 */
const PERCENT_TAIL = /(?:(40|u0040)|(3a|u003a)|(2f|5c|u002f|u005c))/iy;

/**
 * After "&" and any run of "amp;" (an escaped ampersand, ";" optional): an HTML character reference,
 * decimal or hex with any leading zeros, or named, with or without its ";".
 */
const ENTITY_TAIL =
	/(?:#(?:0*(?:(64)|(58)|(47|92))(?![0-9])|x0*(?:(40)|(3a)|(2f|5c))(?![0-9a-f]))|(commat)|(colon)|(b?sol));?/iy;

type SymbolName = "at" | "colon" | "slash";

const AT = 64;
const COLON = 58;
const SLASH = 47;
const BACKSLASH = 92;
const PERCENT_SIGN = 37;
const AMPERSAND = 38;

/** Characters after which a "//" starts a protocol-relative URL (the text's start counts too). */
const BEFORE_PROTOCOL_RELATIVE = /[\s"'`(<=[,:]/;

/** Tabs and line breaks a URL parser drops, so they may come before each slash. */
const isDropped = (c: number) => c === 9 || c === 10 || c === 13;

/** Which symbol a matched spelling is, from its capture groups: three per family, at/colon/slash. */
function symbolOf(match: RegExpExecArray): SymbolName | null {
	for (let group = 1; group < match.length; group++) {
		if (match[group] !== undefined) return (["at", "colon", "slash"] as const)[(group - 1) % 3]!;
	}
	return null;
}

function matchAt(pattern: RegExp, text: string, at: number): { symbol: SymbolName; end: number } | null {
	pattern.lastIndex = at;
	const match = pattern.exec(text);
	if (!match) return null;
	const symbol = symbolOf(match);
	return symbol ? { symbol, end: at + match[0].length } : null;
}

/** Skips repeats of `unit` (lower case; matched in any case, and a ";" after each optional) from `from`. */
function skipRepeats(text: string, from: number, unit: string, optionalSemicolon = false): number {
	let at = from;
	for (;;) {
		for (let i = 0; i < unit.length; i++) {
			const c = text.charCodeAt(at + i);
			if ((c >= 65 && c <= 90 ? c | 0x20 : c) !== unit.charCodeAt(i)) return at;
		}
		at += unit.length;
		if (optionalSemicolon && text.charCodeAt(at) === 59) at++;
	}
}

function runEnd(text: string, from: number): number {
	let at = from;
	while (at < text.length && text.charCodeAt(at) === BACKSLASH) at++;
	return at;
}

/** A spelled symbol starting at `at` (not the bare character, not a backslash read as a slash). */
function spelled(text: string, at: number): { symbol: SymbolName; end: number; run: number } | null {
	const c = text.charCodeAt(at);
	if (c === BACKSLASH) {
		const end = runEnd(text, at);
		const escaped = matchAt(ESCAPE_BODY, text, end);
		return escaped ? { ...escaped, run: end - at } : null;
	}
	if (c === PERCENT_SIGN) return withRun(matchAt(PERCENT_TAIL, text, skipRepeats(text, at + 1, "25")));
	if (c === AMPERSAND) return withRun(matchAt(ENTITY_TAIL, text, skipRepeats(text, at + 1, "amp", true)));
	return null;
}

const withRun = (m: { symbol: SymbolName; end: number } | null) => (m ? { ...m, run: 0 } : null);

function readColon(text: string, at: number): number {
	if (text.charCodeAt(at) === COLON) return at + 1;
	const s = spelled(text, at);
	return s?.symbol === "colon" ? s.end : -1;
}

/**
 * One slash-like unit: "/", a run of backslashes (each read as a slash), an escaped slash or backslash
 * behind a run, JSON's "\/", or an encoded or entity slash. Counts the most slashes any reading gives.
 */
function readSlashes(text: string, at: number): { count: number; end: number } | null {
	const c = text.charCodeAt(at);
	if (c === SLASH) return { count: 1, end: at + 1 };
	if (c === BACKSLASH) {
		const end = runEnd(text, at);
		const run = end - at;
		if (text.charCodeAt(end) === SLASH) return { count: run + 1, end: end + 1 };
		const escaped = matchAt(ESCAPE_BODY, text, end);
		if (escaped?.symbol === "slash") return { count: run, end: escaped.end };
		return { count: run, end };
	}
	const s = spelled(text, at);
	return s?.symbol === "slash" ? { count: 1, end: s.end } : null;
}

/** The end of two or more slashes (tabs and line breaks allowed before each) starting at `at`, or -1. */
function readSeparatorSlashes(text: string, from: number): number {
	let count = 0;
	let end = -1;
	let at = from;
	for (;;) {
		let next = at;
		while (next < text.length && isDropped(text.charCodeAt(next))) next++;
		const unit = readSlashes(text, next);
		if (!unit) break;
		count += unit.count;
		at = end = unit.end;
	}
	return count >= 2 ? end : -1;
}

/**
 * Where a URL ends: every whitespace character, and a tab or line break written as an escape behind any
 * run of backslashes (`\n`, `\r`, `\t`: JSON text), at the run's first backslash. In order.
 */
function findUrlEnds(text: string): number[] {
	const ends: number[] = [];
	let at = 0;
	while (at < text.length) {
		const c = text.charCodeAt(at);
		if (c === BACKSLASH) {
			const end = runEnd(text, at);
			const next = text.charCodeAt(end);
			if (next === 110 || next === 114 || next === 116) ends.push(at);
			at = end;
		} else {
			if (isWhitespace(c)) ends.push(at);
			at++;
		}
	}
	return ends;
}

/** JavaScript's \s, by code: ASCII and Unicode spaces, line and paragraph separators, the BOM. */
function isWhitespace(c: number): boolean {
	if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
	if (c < 0xa0) return false;
	return (
		c === 0xa0 ||
		c === 0x1680 ||
		(c >= 0x2000 && c <= 0x200a) ||
		c === 0x2028 ||
		c === 0x2029 ||
		c === 0x202f ||
		c === 0x205f ||
		c === 0x3000 ||
		c === 0xfeff
	);
}

/** The first index of sorted whose value is at least value (sorted.length when none is). */
function firstAtLeast(sorted: readonly number[], value: number): number {
	let lo = 0;
	let hi = sorted.length;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		if (sorted[mid]! < value) lo = mid + 1;
		else hi = mid;
	}
	return lo;
}

/** Every at-sign spelling, in order: where it starts (a backslash run's first backslash) and ends. */
function findAtSigns(text: string): { starts: number[]; ends: number[] } {
	const starts: number[] = [];
	const ends: number[] = [];
	let at = 0;
	while (at < text.length) {
		const c = text.charCodeAt(at);
		if (c === AT) {
			starts.push(at);
			ends.push(at + 1);
			at++;
		} else if (c === BACKSLASH || c === PERCENT_SIGN || c === AMPERSAND) {
			const s = spelled(text, at);
			if (s?.symbol === "at") {
				starts.push(at);
				ends.push(s.end);
			}
			at = s ? s.end : c === BACKSLASH ? runEnd(text, at) : at + 1;
		} else {
			at++;
		}
	}
	return { starts, ends };
}

/** Code point offsets, so the window counts characters, not UTF-16 units. Identity without surrogates. */
function codePointIndex(text: string): (at: number) => number {
	if (!/[\uD800-\uDFFF]/.test(text)) return (at) => at;
	const index = new Int32Array(text.length + 1);
	let count = 0;
	for (let at = 0; at < text.length; at++) {
		index[at] = count;
		const c = text.charCodeAt(at);
		if (!(c >= 0xdc00 && c <= 0xdfff && at > 0 && isHighSurrogate(text.charCodeAt(at - 1)))) count++;
	}
	index[text.length] = count;
	return (at) => index[at]!;
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

/**
 * A user name shown as it is: "short" is 1 to 20 characters; "plain" is an ASCII letter, then ASCII
 * letters, digits, ".", "_" or "-", with at most 4 digits in all, written as the characters themselves
 * (no escape, entity or percent sign, and so no spelled colon: no password).
 */
export function isPlainUserName(span: string): boolean {
	if (!/^[A-Za-z][A-Za-z0-9._-]{0,19}$/.test(span)) return false;
	return (span.match(/[0-9]/g)?.length ?? 0) <= 4;
}

/**
 * How far a credential may run after its separator: the spec's `window` rule for a failed call's structured error
 * (only the 8,192-character window bounds it, so a password holding spaces or line breaks is masked whole), or
 * `url-end` for everything else Chat shows of a tool (the window, and the URL's end at whitespace, so a document's
 * later lines with an `@` stay readable).
 */
export type UrlScan = "window" | "url-end";

/** The [start, end) ranges the URL rule masks, in order and not overlapping. */
export function urlCredentialRanges(text: string, scan: UrlScan = "url-end"): Array<[number, number]> {
	const ranges: Array<[number, number]> = [];
	const { starts, ends } = findAtSigns(text);
	if (starts.length === 0) return ranges;
	const cp = codePointIndex(text);
	const startCps = starts.map(cp);
	const urlEnds = scan === "url-end" ? findUrlEnds(text) : [];

	/** Masks up to the last at-sign in the window after sepEnd, before the URL ends; returns where scanning goes on. */
	const maskAfter = (sepEnd: number): number => {
		const urlEnd = urlEnds[firstAtLeast(urlEnds, sepEnd)] ?? text.length;
		const limit = Math.min(cp(sepEnd) + URL_CREDENTIAL_WINDOW, cp(urlEnd));
		// The first at-sign that starts at or past the limit; the one before it is the last inside.
		const k = firstAtLeast(startCps, limit) - 1;
		if (k < 0 || starts[k]! < sepEnd) return sepEnd;
		if (starts[k]! > sepEnd && !isPlainUserName(text.slice(sepEnd, starts[k])))
			ranges.push([sepEnd, starts[k]!]);
		return ends[k]!;
	};

	let at = 0;
	while (at < text.length) {
		const c = text.charCodeAt(at);
		if (c !== COLON && c !== SLASH && c !== BACKSLASH && c !== PERCENT_SIGN && c !== AMPERSAND) {
			at++;
			continue;
		}
		if (c !== COLON && (at === 0 || BEFORE_PROTOCOL_RELATIVE.test(text[at - 1]!))) {
			const sepEnd = readSeparatorSlashes(text, at);
			if (sepEnd >= 0) {
				at = maskAfter(sepEnd);
				continue;
			}
		}
		const colonEnd = readColon(text, at);
		if (colonEnd >= 0) {
			const sepEnd = readSeparatorSlashes(text, colonEnd);
			at = sepEnd >= 0 ? maskAfter(sepEnd) : colonEnd;
			continue;
		}
		// A backslash run is read whole, so no position inside one is scanned again.
		at = c === BACKSLASH ? runEnd(text, at) : at + 1;
	}
	return ranges;
}
