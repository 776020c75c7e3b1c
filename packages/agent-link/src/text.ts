/**
 * How the protocol measures text: lengths in Unicode code points ("characters" in the spec) and
 * frames in UTF-8 bytes, both counted without copying the string and stopping once past a limit.
 */
import { NOTE_MAX } from "./limits";

/**
 * The number of code points in text, or limit + 1 as soon as it is known to exceed limit.
 * A surrogate pair is one code point; a lone surrogate counts as one too, as `[...text]` does.
 */
export function codePointLength(text: string, limit = Number.POSITIVE_INFINITY): number {
	// Every code point is one or two UTF-16 units, so the unit count bounds the answer.
	if (text.length <= limit && !hasSurrogate(text)) return text.length;
	let count = 0;
	for (let i = 0; i < text.length; i++) {
		const unit = text.charCodeAt(i);
		if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
			const next = text.charCodeAt(i + 1);
			if (next >= 0xdc00 && next <= 0xdfff) i++;
		}
		count++;
		if (count > limit) return count;
	}
	return count;
}

function hasSurrogate(text: string): boolean {
	return /[\ud800-\udfff]/.test(text);
}

/**
 * The UTF-8 size of text in bytes, or limit + 1 as soon as it is known to exceed limit.
 * A lone surrogate counts as the 3 bytes of the U+FFFD that an encoder writes in its place.
 */
export function utf8ByteLength(text: string, limit = Number.POSITIVE_INFINITY): number {
	// No code unit takes more than 3 bytes (a pair takes 4 for 2 units), so short text needs no count.
	if (text.length * 3 <= limit) return countUtf8(text, Number.POSITIVE_INFINITY);
	return countUtf8(text, limit);
}

function countUtf8(text: string, limit: number): number {
	let bytes = 0;
	for (let i = 0; i < text.length; i++) {
		const unit = text.charCodeAt(i);
		if (unit < 0x80) bytes += 1;
		else if (unit < 0x800) bytes += 2;
		else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
			const next = text.charCodeAt(i + 1);
			if (next >= 0xdc00 && next <= 0xdfff) {
				bytes += 4;
				i++;
			} else bytes += 3;
		} else bytes += 3;
		if (bytes > limit) return bytes;
	}
	return bytes;
}

/**
 * Cuts text to at most max code points, never splitting a surrogate pair. Senders use it for
 * the fields the spec says to cut (a `message` or an error part's text to 4000 characters).
 */
export function cutToCodePoints(text: string, max: number): string {
	if (codePointLength(text, max) <= max) return text;
	let count = 0;
	let i = 0;
	while (i < text.length && count < max) {
		const unit = text.charCodeAt(i);
		const pair =
			unit >= 0xd800 &&
			unit <= 0xdbff &&
			i + 1 < text.length &&
			text.charCodeAt(i + 1) >= 0xdc00 &&
			text.charCodeAt(i + 1) <= 0xdfff;
		i += pair ? 2 : 1;
		count++;
	}
	return text.slice(0, i);
}

/** The decoded size of standard base64 text (padding optional), without decoding it. */
export function base64DecodedLength(data: string): number {
	let padding = 0;
	if (data.endsWith("==")) padding = 2;
	else if (data.endsWith("=")) padding = 1;
	return Math.floor(((data.length - padding) * 3) / 4);
}

/**
 * Whether data is standard base64 (RFC 4648 §4 alphabet), with or without its = padding. A plain
 * character class keeps it linear: a grouped pattern took a second on a 1 MiB attachment.
 */
export function isBase64(data: string): boolean {
	const padding = /^[A-Za-z0-9+/]*(={0,2})$/.exec(data)?.[1];
	if (padding === undefined) return false;
	return padding ? data.length % 4 === 0 : data.length % 4 !== 1;
}

/** Cuts a note field (a message, an error part's text) to the 4000 characters the receiver accepts. */
export function cutNote(text: string): string {
	return cutToCodePoints(text, NOTE_MAX);
}
