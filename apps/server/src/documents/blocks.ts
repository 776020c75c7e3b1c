// A document's top-level Markdown blocks (line ranges, exact text, digests): the handles the Planner reads and edits by.
import { createHash } from "node:crypto";
import { getDefaults, Lexer, Tokenizer } from "marked";
import { z } from "zod";
import { DomainError } from "../domain-error";

export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;

export const digestSchema = z
	.string()
	.regex(DIGEST_PATTERN, "must be sha256: followed by 64 lowercase hex digits, as read_plan gave it")
	.describe("The block's digest from your latest read_plan or edit_plan result: sha256:<64 hex>.");

/** How a Planner names a block: the index and digest its latest read_plan or edit_plan result gave it. */
export const blockRefSchema = z.strictObject({
	index: z.number().int().min(0).describe("The block's 0-based index from your latest read."),
	digest: digestSchema,
});
export type BlockRef = z.infer<typeof blockRefSchema>;

export const blockSchema = z.strictObject({
	/** 0-based position among the document's blocks. */
	index: z.number().int().min(0),
	/** marked's top-level token type: heading, paragraph, list, code, table, blockquote, html, hr, def. */
	kind: z.string(),
	/** 1-based, inclusive: the block's first and last source lines. */
	startLine: z.number().int().min(1),
	endLine: z.number().int().min(1),
	/** UTF-16 offsets into the source: text is source.slice(start, end). */
	start: z.number().int().min(0),
	end: z.number().int().min(0),
	/** The exact source text, from the start of its first line to the end of its last, without that line's break. */
	text: z.string(),
	digest: z.string().regex(DIGEST_PATTERN),
});
export type Block = z.infer<typeof blockSchema>;

/** A document's domain error: a stable code, one sentence, a hint saying what to do next, and an HTTP status. */
export class DocumentError extends DomainError {
	override readonly name = "DocumentError";
}

/** Where each line starts and ends. Lines end at \n, \r\n or a lone \r (as CommonMark and marked count them). */
export interface LineTable {
	/** Number of lines: "" has 0, "a" and "a\n" have 1, "a\n\n" has 2. */
	count: number;
	/** UTF-16 offset of each line's first character. */
	starts: number[];
	/** Offset just past each line's last character, before its line break. */
	contentEnds: number[];
	/** Offset just past each line's line break (equal to contentEnds for a last line without one). */
	ends: number[];
}

export function lineTable(source: string): LineTable {
	const starts: number[] = [];
	const contentEnds: number[] = [];
	const ends: number[] = [];
	let lineStart = 0;
	for (let i = 0; i < source.length; i++) {
		const c = source.charCodeAt(i);
		if (c !== 10 && c !== 13) continue;
		const end = c === 13 && source.charCodeAt(i + 1) === 10 ? i + 2 : i + 1;
		starts.push(lineStart);
		contentEnds.push(i);
		ends.push(end);
		lineStart = end;
		i = end - 1;
	}
	if (lineStart < source.length) {
		starts.push(lineStart);
		contentEnds.push(source.length);
		ends.push(source.length);
	}
	return { count: starts.length, starts, contentEnds, ends };
}

/** The 0-based line holding offset (offset < source length). */
function lineAt(lines: LineTable, offset: number): number {
	let lo = 0;
	let hi = lines.count - 1;
	while (lo < hi) {
		const mid = (lo + hi + 1) >> 1;
		if (lines.starts[mid]! <= offset) lo = mid;
		else hi = mid - 1;
	}
	return lo;
}

/** The digest of a block: SHA-256 of its text (see Block.text) encoded as UTF-8, as sha256:<64 lowercase hex>. */
export function digestText(text: string): string {
	return `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;
}

// Characters of a blank line in CommonMark; anything else makes a line part of a block.
function isBlankChar(c: number): boolean {
	return c === 32 || c === 9 || c === 10 || c === 13;
}

interface Span {
	kind: string;
	first: number;
	last: number;
}

/**
 * marked 18's setext-heading rule backtracks quadratically on a long line (seconds for 20,000
 * characters), and the lexer tries it at every paragraph. It can only match when an underline
 * line (=== or ---) comes before the first blank line, so look for one first.
 */
export class LinearTokenizer extends Tokenizer {
	override lheading(src: string) {
		const blank = /\n[ \t]*(?:\n|$)/.exec(src);
		const region = blank ? src.slice(0, blank.index + 1) : `${src}\n`;
		return /\n {0,3}(?:=+|-+)[ \t]*\n/.test(region) ? super.lheading(src) : undefined;
	}
}

const LEXED_LINE_MAX = 1_000;
// Characters kept from the middle of a long line: table pipes and escapes, and HTML block ends.
const OTHER_TEXT_RUNS = /[^|\\<>\-?\]!]+/g;

/**
 * What marked lexes: lines over 1,000 characters keep their first 500 and last 200 characters,
 * and between them, in order, at most 300 of the characters a block's extent can hang on (table
 * pipes, escapes, HTML block ends), with each run of other text as one "x" or one space. The
 * line count never changes, so token lines are source lines; regexes stay fast on long lines.
 */
function lexable(normalised: string): string {
	if (normalised.length <= LEXED_LINE_MAX) return normalised;
	return normalised
		.split("\n")
		.map((line) => {
			if (line.length <= LEXED_LINE_MAX) return line;
			const middle = line
				.slice(500, -200)
				.replace(OTHER_TEXT_RUNS, (run) => (/^[ \t]+$/.test(run) ? " " : "x"))
				.slice(0, 300);
			return line.slice(0, 500) + middle + line.slice(-200);
		})
		.join("\n");
}

/**
 * Line spans of marked's top-level tokens. Offsets come from each token's raw length over the
 * text marked lexes; a span is then widened to whole lines. marked's raw text is not always
 * that text byte for byte (it can rewrite a trailing blank line), so spans only borrow
 * boundaries from it: tokens that would share a line are merged, which keeps the blocks whole,
 * ordered lines whatever the lexer does.
 */
function tokenSpans(normalised: string): Span[] {
	const lexed = lexable(normalised);
	const lines = lineTable(lexed);
	let tokens: { type: string; raw: string }[];
	try {
		tokens = new Lexer({ ...getDefaults(), tokenizer: new LinearTokenizer() }).blockTokens(lexed);
	} catch {
		// marked throws on input it cannot get through (deeply nested quotes overflow the stack);
		// then runs of non-blank lines are the blocks.
		return splitOnBlankLines(lexed, lines);
	}
	const spans: Span[] = [];
	const add = (kind: string, from: number, to: number) => {
		let a = from;
		while (a < to && isBlankChar(lexed.charCodeAt(a))) a++;
		let b = to - 1;
		while (b >= a && isBlankChar(lexed.charCodeAt(b))) b--;
		if (a > b) return;
		const first = lineAt(lines, a);
		const last = lineAt(lines, b);
		const prev = spans.at(-1);
		if (prev && first <= prev.last) prev.last = Math.max(prev.last, last);
		else spans.push({ kind, first, last });
	};
	let cursor = 0;
	for (const token of tokens) {
		const end = Math.min(cursor + token.raw.length, lexed.length);
		if (token.type !== "space") add(token.type, cursor, end);
		cursor = end;
	}
	if (cursor < lexed.length) add("paragraph", cursor, lexed.length);
	return spans;
}

function splitOnBlankLines(normalised: string, lines: LineTable): Span[] {
	const spans: Span[] = [];
	let open: Span | undefined;
	for (let line = 0; line < lines.count; line++) {
		let blank = true;
		for (let i = lines.starts[line]!; i < lines.contentEnds[line]! && blank; i++) {
			blank = isBlankChar(normalised.charCodeAt(i));
		}
		if (blank) open = undefined;
		else if (open) open.last = line;
		else {
			open = { kind: "paragraph", first: line, last: line };
			spans.push(open);
		}
	}
	return spans;
}

/**
 * The document's top-level blocks, in order. Line breaks are kept as they are (CRLF stays CRLF);
 * marked lexes a copy with CRLF and lone CR turned into LF, which has the same lines.
 * Blocks tile the source: source = sep0 + block0.text + sep1 + ... + blockN.text + sepN+1,
 * where every separator is line breaks and blank (spaces/tabs only) lines.
 */
export function splitBlocks(source: string): Block[] {
	const lines = lineTable(source);
	const normalised = source.replace(/\r\n?/g, "\n");
	const spans = tokenSpans(normalised);
	return spans.map((span, index) => {
		const start = lines.starts[span.first]!;
		const end = lines.contentEnds[span.last]!;
		const text = source.slice(start, end);
		return {
			index,
			kind: span.kind,
			startLine: span.first + 1,
			endLine: span.last + 1,
			start,
			end,
			text,
			digest: digestText(text),
		};
	});
}

/** The block at ref.index when its digest still matches, else undefined. */
export function findBlock(blocks: readonly Block[], ref: BlockRef): Block | undefined {
	const block = blocks[ref.index];
	return block && block.digest === ref.digest ? block : undefined;
}

/** How many blocks have this digest (identical text gives identical digests). */
export function digestCount(blocks: readonly Block[], digest: string): number {
	let count = 0;
	for (const block of blocks) if (block.digest === digest) count++;
	return count;
}

/** Whether more than one block now has this digest, so a passage linked by it is ambiguous. */
export function digestRepeats(blocks: readonly Block[], digest: string): boolean {
	return digestCount(blocks, digest) > 1;
}

export type AnchorResult =
	| { block: Block; reason?: undefined }
	| { block: null; reason: "changed" | "repeated" | "decision-card" };

/**
 * Where a question's cards go (spec: Questions, block): directly after the named block, or at the
 * end of the document (block null) when that block has changed since it was read, its digest now
 * repeats, or it is itself a decision card. Which blocks are decision cards is the caller's rule.
 */
export function resolveAnchor(
	blocks: readonly Block[],
	ref: BlockRef,
	isDecisionCard: (block: Block) => boolean = () => false,
): AnchorResult {
	const block = findBlock(blocks, ref);
	if (!block) return { block: null, reason: "changed" };
	if (digestRepeats(blocks, block.digest)) return { block: null, reason: "repeated" };
	if (isDecisionCard(block)) return { block: null, reason: "decision-card" };
	return { block };
}
