// Counting a string's characters (code points) and UTF-8 bytes, and choosing where to cut a line too long to show whole.

// A code unit pair that forms one code point: never split, 4 bytes in UTF-8.
function isPairAt(s: string, i: number): boolean {
	const c = s.charCodeAt(i);
	if (c < 0xd800 || c > 0xdbff) return false;
	const d = s.charCodeAt(i + 1);
	return d >= 0xdc00 && d <= 0xdfff;
}

/** UTF-8 bytes of s.slice(from, to), as TextEncoder encodes it (a lone surrogate becomes U+FFFD, 3 bytes). */
export function utf8Length(s: string, from: number, to: number): number {
	let bytes = 0;
	for (let i = from; i < to; i++) {
		const c = s.charCodeAt(i);
		if (c < 0x80) bytes += 1;
		else if (c < 0x800) bytes += 2;
		else if (isPairAt(s, i) && i + 1 < to) {
			bytes += 4;
			i++;
		} else bytes += 3;
	}
	return bytes;
}

/** Code points in s.slice(from, to); a lone surrogate counts as one. */
export function codePointCount(s: string, from: number, to: number): number {
	let count = 0;
	for (let i = from; i < to; i++) {
		if (isPairAt(s, i) && i + 1 < to) i++;
		count++;
	}
	return count;
}

/** The offset n code points after from, or -1 when that passes to. */
export function codePointOffset(s: string, from: number, to: number, n: number): number {
	let i = from;
	for (let k = 0; k < n; k++) {
		if (i >= to) return -1;
		i += isPairAt(s, i) && i + 1 < to ? 2 : 1;
	}
	return i;
}

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/**
 * Where to cut the line content s[from, to) so the part before the cut fits in room bytes:
 * always between code points (never inside a surrogate pair, so never inside a UTF-8 sequence),
 * after a space when one is near the end, else between grapheme clusters when it can. The cut
 * stays before `to`, so what follows is never a line break alone. Returns from when nothing fits.
 */
export function cutLine(s: string, from: number, to: number, room: number): number {
	let cut = from;
	let bytes = 0;
	while (cut < to) {
		const units = isPairAt(s, cut) && cut + 1 < to ? 2 : 1;
		const size = utf8Length(s, cut, cut + units);
		if (bytes + size > room) break;
		bytes += size;
		cut += units;
	}
	if (cut === to) cut -= cut - 2 >= from && isPairAt(s, cut - 2) ? 2 : 1;
	if (cut <= from) return from;
	for (let k = cut - 1; k > from && k >= cut - 256; k--) {
		const c = s.charCodeAt(k);
		if (c === 32 || c === 9) return k + 1;
	}
	// The window's own start may fall inside a cluster, so only boundaries after it count.
	const windowStart = Math.max(from, cut - 32);
	let best = cut;
	for (const { index } of segmenter.segment(s.slice(windowStart, Math.min(to, cut + 32)))) {
		const at = windowStart + index;
		if (at > cut) break;
		if (at > windowStart) best = at;
	}
	return best;
}
