// Masks credentials in what Chat stores and shows of a tool's result or error (never in what crosses
// the agent connection): URL credentials, token shapes, and credential assignments. See docs/chat.md.
import { REDACTED } from "@chopin/agent-link/redact";
import { type UrlScan, urlCredentialRanges } from "./url-credentials";

export { REDACTED };

/**
 * Masks every credential Chopin recognises in text, read as plain text even when it holds JSON. URL credentials end
 * where the URL does (`url-end`), except in a failed call's structured error message, which keeps the spec's broader
 * `window` rule (see docs/chat.md § URL credentials).
 */
export function maskCredentials(text: string, scan: UrlScan = "url-end"): string {
	return maskAssignments(maskTokenShapes(applyRanges(text, urlCredentialRanges(text, scan))));
}

/** Replaces each [start, end) range (in order, not overlapping) with [redacted]. */
function applyRanges(text: string, ranges: Array<[number, number]>): string {
	if (ranges.length === 0) return text;
	let out = "";
	let last = 0;
	for (const [start, end] of ranges) {
		out += text.slice(last, start) + REDACTED;
		last = end;
	}
	return out + text.slice(last);
}

// Token shapes. Each starts only where no character of its own alphabet comes before it, so a long
// run is tried once, not once per position (which would be quadratic on adversarial text).
const TOKEN_SHAPES: ReadonlyArray<{ pattern: RegExp; accept?: (token: string) => boolean }> = [
	{ pattern: /(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9_]{8,}/g }, // GitHub: ghp_, gho_, ghu_, ghs_, ghr_
	{ pattern: /(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{8,}/g },
	{ pattern: /(?<![A-Za-z0-9_-])chopin_[pmr]_[A-Za-z0-9_-]{8,}/g }, // Chopin Planner and machine tokens
	{ pattern: /(?<![A-Za-z0-9_.-])xox[A-Za-z0-9.]{0,12}-[A-Za-z0-9.-]{4,}/g }, // Slack xoxb-, xoxp-, xoxe.xoxp-
	{ pattern: /(?<![A-Za-z0-9_-])xapp-[A-Za-z0-9-]{8,}/g }, // Slack app-level tokens
	{ pattern: /(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{16,}/g }, // GitLab
	{ pattern: /(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/g },
	{ pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])/g }, // AWS access key ids
	{ pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}/g }, // Google API keys
	{ pattern: /(?<![A-Za-z0-9_])[sr]k_(?:live|test)_[A-Za-z0-9]{10,}/g }, // Stripe secret and restricted keys
	{
		// OpenAI and Anthropic style keys; a digit is required so "sk-learn-..." words stay readable.
		pattern: /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}/g,
		accept: (token) => /[0-9]/.test(token.slice(3)) && /[A-Za-z]/.test(token.slice(3)),
	},
	{ pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g }, // JWTs
];

const BEARER = /\bBearer[ \t]+[A-Za-z0-9._~+/=-]+/gi;
const PRIVATE_KEY_BEGIN = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----/g;
const PRIVATE_KEY_END = "-----END ";

function maskTokenShapes(text: string): string {
	let out = maskPrivateKeys(text);
	for (const { pattern, accept } of TOKEN_SHAPES) {
		out = out.replace(pattern, (token) => (!accept || accept(token) ? REDACTED : token));
	}
	return out.replace(BEARER, (match) => `${match.slice(0, 6)} ${REDACTED}`);
}

/** A PEM private key block, kept only its BEGIN line; with no END line, to the end of the text. */
function maskPrivateKeys(text: string): string {
	let out = "";
	let last = 0;
	PRIVATE_KEY_BEGIN.lastIndex = 0;
	for (let begin = PRIVATE_KEY_BEGIN.exec(text); begin; begin = PRIVATE_KEY_BEGIN.exec(text)) {
		const bodyStart = begin.index + begin[0].length;
		const end = text.indexOf(PRIVATE_KEY_END, bodyStart);
		out += `${text.slice(last, bodyStart)}${REDACTED}`;
		last = end < 0 ? text.length : end;
		PRIVATE_KEY_BEGIN.lastIndex = last + 1;
		if (end < 0) break;
	}
	return out + text.slice(last);
}

// Credential assignments: a key that names a secret, then = : := or =>, then its value.

/** Words that make a key secret wherever they appear in it (after camelCase and - . become _). */
const SECRET_KEY_WORDS =
	/password|passwd|passphrase|secret|token|credential|proxy|authori[sz]ation|cookie|signature|(?:api|access|private|client|signing|encryption|master|deploy|ssh)_?key|session_?(?:id|key)|connection_?string/;

/** Short words that make a key secret only as a whole segment, so "bypass" or "author" stay readable. */
const SECRET_KEY_SEGMENTS = /(?:^|_)(?:pass|pwd|pw|auth|sig|sas|dsn|jwt|otp)(?:_|$)/;

/** Keys whose value is the rest of the line: HTTP headers that hold several words or pairs. */
const WHOLE_LINE_KEYS = /(?:authori[sz]ation|cookie)$/;

/** Authorization schemes kept visible before the masked credential. */
const AUTH_SCHEME = /^(?:basic|bearer|digest|token|negotiate|ntlm|oauth|apikey|key|aws4-hmac-sha256)[ \t]+/i;

export function isSecretKey(key: string): boolean {
	const normalized = key
		.replace(/([a-z0-9])([A-Z])/g, "$1_$2")
		.toLowerCase()
		.replace(/[-.]/g, "_");
	return SECRET_KEY_WORDS.test(normalized) || SECRET_KEY_SEGMENTS.test(normalized);
}

const KEY = /[A-Za-z][A-Za-z0-9_.-]*/g;
const SEPARATOR = /=>|:=|=|:/y;
const QUOTES = new Set(['"', "'", "`"]);
const isBlank = (c: string | undefined) => c === " " || c === "\t";
const isSpace = (c: string | undefined) => c !== undefined && c.trim() === "";
const isLineBreak = (c: string | undefined) => c === "\n" || c === "\r";

function maskAssignments(text: string): string {
	const ranges: Array<[number, number]> = [];
	KEY.lastIndex = 0;
	for (let key = KEY.exec(text); key; key = KEY.exec(text)) {
		const name = key[0];
		if (name.length > 128 || !isSecretKey(name)) continue;
		const keyEnd = key.index + name.length;
		const afterKey = skipClosingQuote(text, keyEnd);
		let at = afterKey;
		while (isBlank(text[at])) at++;
		SEPARATOR.lastIndex = at;
		const separator = SEPARATOR.exec(text);
		if (separator) {
			at += separator[0].length;
		} else if (text.startsWith("--", key.index - 2) && afterKey === keyEnd && at > keyEnd) {
			// A command-line flag followed by its value: --password hunter2
		} else {
			continue;
		}
		while (isBlank(text[at])) at++;
		const value = readValue(text, at, WHOLE_LINE_KEYS.test(name.toLowerCase()));
		if (!value) continue;
		ranges.push(value);
		KEY.lastIndex = Math.max(KEY.lastIndex, value[1]);
	}
	return applyRanges(text, ranges);
}

/** After a quoted key: its closing quote, however many backslashes escape it. */
function skipClosingQuote(text: string, from: number): number {
	let at = from;
	while (text[at] === "\\") at++;
	return QUOTES.has(text[at]!) ? at + 1 : from;
}

/** The range of a value to mask, or null when there is nothing (left) to hide. */
function readValue(text: string, from: number, wholeLine: boolean): [number, number] | null {
	let at = from;
	while (text[at] === "\\") at++;
	const quote = text[at];
	if (quote !== undefined && QUOTES.has(quote)) return quoted(text, at + 1, quote, at - from);
	if (text[from] === "{" || text[from] === "[") return null; // a nested object: its own keys are read
	let start = from;
	let end = from;
	if (wholeLine) {
		const scheme = AUTH_SCHEME.exec(text.slice(from, from + 40));
		if (scheme) start = end = from + scheme[0].length;
		while (end < text.length && !isLineBreak(text[end])) end++;
		while (end > start && isSpace(text[end - 1])) end--;
	} else {
		while (end < text.length && !isSpace(text[end]) && !QUOTES.has(text[end]!)) {
			if (text[end] !== "\\") {
				end++;
				continue;
			}
			const run = runOfBackslashes(text, end);
			if (QUOTES.has(text[run]!)) break; // an escaped quote closes the JSON string the value is in
			end = run;
		}
	}
	return nonEmpty(text, start, end);
}

/** Inside quotes: up to the quote escaped as deep as the opening one, or to the end of the line. */
function quoted(text: string, start: number, quote: string, depth: number): [number, number] | null {
	let at = start;
	while (at < text.length && !isLineBreak(text[at])) {
		if (text[at] === "\\") {
			const run = runOfBackslashes(text, at);
			if (text[run] === quote && run - at <= depth) return nonEmpty(text, start, at);
			at = text[run] === quote ? run + 1 : run; // a quote escaped deeper than the opening is content
			continue;
		}
		if (text[at] === quote && depth === 0) return nonEmpty(text, start, at);
		at++;
	}
	return nonEmpty(text, start, at);
}

function runOfBackslashes(text: string, from: number): number {
	let at = from;
	while (text[at] === "\\") at++;
	return at;
}

function nonEmpty(text: string, start: number, end: number): [number, number] | null {
	if (end <= start) return null;
	if (end - start === REDACTED.length && text.startsWith(REDACTED, start)) return null;
	return [start, end];
}
