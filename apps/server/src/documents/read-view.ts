// The paged text a model reads a document through (read_plan, read_child): spec "Reading a large document".
import { z } from "zod";
import { type Block, DocumentError, type LineTable, lineTable, splitBlocks } from "./blocks";
import { codePointCount, codePointOffset, cutLine, utf8Length } from "./characters";

/** Every result, header and lists included, is at most this many UTF-8 bytes. */
export const READ_BUDGET_BYTES = 16_000;
/** The outline of headings on a large document's first page takes at most this much of the budget. */
const SECTIONS_BUDGET_BYTES = 3_000;
const PREVIEW_CHARS = 48;
/** Blocks listed on each side of the ones the shown lines touch, when there is room. */
const CONTEXT_BLOCKS = 5;

export const readArgsSchema = z.strictObject({
	offset: z.number().int().min(1).optional().describe("1-based line to start at (default 1)."),
	limit: z
		.number()
		.int()
		.min(1)
		.optional()
		.describe("Most lines to return; a result stops sooner at its 16,000-byte budget and says so."),
	column: z
		.number()
		.int()
		.min(1)
		.optional()
		.describe("1-based character in line offset to start at, to continue a line too long for one result."),
});
export type ReadArgs = z.infer<typeof readArgsSchema>;

export const readDocumentSchema = z.object({
	id: z.string(),
	title: z.string(),
	url: z.string(),
	revision: z.number().int().min(0),
	source: z.string(),
});
export type ReadDocument = z.infer<typeof readDocumentSchema>;

const blockEntrySchema = z.strictObject({
	index: z.number().int(),
	startLine: z.number().int(),
	endLine: z.number().int(),
	kind: z.string(),
	digest: z.string(),
	/** The start of the block's first line, at most 48 characters. */
	preview: z.string(),
});
export type BlockEntry = z.infer<typeof blockEntrySchema>;

/** The structured view the reading tools return; formatReadView turns it into the text the model reads. */
export const readViewSchema = z.strictObject({
	document: z.strictObject({
		id: z.string(),
		title: z.string(),
		url: z.string(),
		revision: z.number().int(),
		bytes: z.number().int(),
		lines: z.number().int(),
		blocks: z.number().int(),
	}),
	tool: z.string(),
	shown: z.strictObject({
		/** Where text starts: 1-based line and character (code point) column. */
		fromLine: z.number().int(),
		fromColumn: z.number().int(),
		/** The last line shown (fromLine - 1 when nothing is), and its last column when cut inside it. */
		toLine: z.number().int(),
		toColumn: z.number().int().nullable(),
		lines: z.number().int(),
		stop: z.enum(["end", "limit", "budget"]),
		limit: z.number().int().nullable(),
	}),
	/** The exact arguments of the call that continues, or null at the end of the document. */
	next: z.record(z.string(), z.unknown()).nullable(),
	blocks: z.strictObject({
		before: z.number().int(),
		after: z.number().int(),
		listed: z.array(blockEntrySchema),
	}),
	/** The headings of a document too large for one result, on its first page only. */
	sections: z.strictObject({ total: z.number().int(), listed: z.array(blockEntrySchema) }).nullable(),
	/** A verbatim slice of the source. */
	text: z.string(),
});
export type ReadView = z.infer<typeof readViewSchema>;

/** Which tool the view is for, and its arguments that every continuing call repeats (read_child's document). */
export interface ReadCall {
	tool: string;
	fixedArgs?: Record<string, unknown>;
}

// One line of a header field: line breaks and control characters become spaces, long values are cut.
export function oneLine(value: string, maxChars: number): string {
	// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes.
	const flat = value.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, " ");
	if (codePointCount(flat, 0, flat.length) <= maxChars) return flat;
	return `${flat.slice(0, codePointOffset(flat, 0, flat.length, maxChars))}…`;
}

function entryOf(block: Block): BlockEntry {
	const firstLine = block.text.split(/\r\n|\r|\n/, 1)[0]!.trim();
	return {
		index: block.index,
		startLine: block.startLine,
		endLine: block.endLine,
		kind: block.kind,
		digest: block.digest,
		preview: oneLine(firstLine, PREVIEW_CHARS),
	};
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;
const lineRange = (a: number, b: number) => (a === b ? `line ${a}` : `lines ${a}-${b}`);

export function formatBlockEntry(e: BlockEntry): string {
	return `#${e.index} ${lineRange(e.startLine, e.endLine)} ${e.kind} ${e.digest} ${JSON.stringify(e.preview)}`;
}

function formatSectionEntry(e: BlockEntry): string {
	return `#${e.index} line ${e.startLine} ${JSON.stringify(e.preview)}`;
}

function nextCallText(view: ReadView): string {
	return view.next ? `${view.tool} ${JSON.stringify(view.next)}` : "none, this is the end of the document";
}

function shownText(view: ReadView): string {
	const s = view.shown;
	const total = view.document.lines;
	let where: string;
	if (s.lines === 0) {
		where =
			total === 0 ? "nothing, the document is empty" : `nothing, line ${s.fromLine} is past the last line`;
	} else if (s.fromColumn === 1 && s.toColumn === null) {
		where = `${lineRange(s.fromLine, s.toLine)} of ${total}`;
	} else {
		const from = `line ${s.fromLine}${s.fromColumn > 1 ? ` column ${s.fromColumn}` : ""}`;
		const to = `line ${s.toLine}${s.toColumn !== null ? ` column ${s.toColumn}` : ""}`;
		where = `${from} to ${to} (of ${plural(total, "line")})`;
	}
	const why = {
		end: "this is the end of the document",
		limit: `stopped at limit ${plural(s.limit ?? 0, "line")}`,
		budget: `stopped at the ${READ_BUDGET_BYTES}-byte limit of one result`,
	}[s.stop];
	return s.lines === 0 ? where : `${where}; ${why}`;
}

function blocksHeading(view: ReadView): string {
	const { before, after } = view.blocks;
	const total = view.document.blocks;
	const legend = "(#index lines kind digest, then how the block starts)";
	if (before === 0 && after === 0) return `blocks ${legend}: all ${total}`;
	return `blocks ${legend}: ${total} in all; ${before} before and ${after} after these are not listed (read with offset to see them)`;
}

function sectionsHeading(total: number, listed: number): string {
	return total === listed
		? `sections (the document's headings): all ${total}`
		: `sections (the document's headings): ${total} in all, the first ${listed} listed`;
}

function delimiter(view: ReadView): string {
	const s = view.shown;
	const from = s.fromColumn > 1 ? `line ${s.fromLine} column ${s.fromColumn}` : `line ${s.fromLine}`;
	return `--- the document's text from ${from}, verbatim ---`;
}

function headerLines(view: ReadView): string[] {
	const d = view.document;
	return [
		`document: ${d.title}`,
		`id: ${d.id}`,
		`url: ${d.url}`,
		`revision: ${d.revision}`,
		`size: ${plural(d.bytes, "byte")}, ${plural(d.lines, "line")}, ${plural(d.blocks, "block")}`,
		`shown: ${shownText(view)}`,
		`next: ${nextCallText(view)}`,
	];
}

/**
 * The text a model reads. Its last part is the source slice, after the first line that starts
 * with "--- the document's text": everything after that line's break is the document verbatim.
 */
export function formatReadView(view: ReadView): string {
	const parts = [headerLines(view).join("\n"), ""];
	if (view.sections) {
		parts.push(sectionsHeading(view.sections.total, view.sections.listed.length));
		for (const e of view.sections.listed) parts.push(formatSectionEntry(e));
		parts.push("");
	}
	parts.push(blocksHeading(view));
	for (const e of view.blocks.listed) parts.push(formatBlockEntry(e));
	parts.push("", delimiter(view));
	return `${parts.join("\n")}\n${view.text}`;
}

function validate(
	args: ReadArgs,
	lines: LineTable,
	source: string,
	tool: string,
): { line: number; at: number } {
	// Only the paging arguments: read_child's own (its document) are its caller's to check.
	const parsed = readArgsSchema.safeParse({ offset: args.offset, limit: args.limit, column: args.column });
	if (!parsed.success) {
		const issue = parsed.error.issues[0]!;
		throw new DocumentError(
			"invalid-read-arguments",
			`${issue.path.join(".") || "arguments"}: ${issue.message}.`,
			`${tool} takes optional whole numbers offset (≥ 1), limit (≥ 1) and column (≥ 1).`,
		);
	}
	const offset = args.offset ?? 1;
	if (offset > lines.count + 1) {
		throw new DocumentError(
			"offset-out-of-range",
			`offset ${offset} is past the end: the document has ${lines.count} lines, so offset can be 1 to ${lines.count + 1}.`,
			`Call ${tool} without offset to start at the top.`,
		);
	}
	const line = offset - 1;
	const start = line < lines.count ? lines.starts[line]! : source.length;
	const end = line < lines.count ? lines.contentEnds[line]! : source.length;
	const column = args.column ?? 1;
	const at = codePointOffset(source, start, end, column - 1);
	if (at < 0) {
		const length = codePointCount(source, start, end);
		throw new DocumentError(
			"column-out-of-range",
			`column ${column} is past the end of line ${offset}, which has ${length} characters (column can be 1 to ${length + 1}).`,
			`Use the column a next: line gave, or leave column out to read line ${offset} from its start.`,
		);
	}
	return { line, at };
}

// A model pages through one revision call after call: keep the last source's lines and blocks.
let last: { source: string; lines: LineTable; blocks: Block[] } | undefined;
function analyse(source: string): { lines: LineTable; blocks: Block[] } {
	if (last?.source !== source) last = { source, lines: lineTable(source), blocks: splitBlocks(source) };
	return last;
}

// The bytes one listed block adds to a result: its line and a line break.
const entryBytes = (e: BlockEntry) => Buffer.byteLength(formatBlockEntry(e)) + 1;

function draft(
	doc: ReadDocument,
	args: ReadArgs,
	call: ReadCall,
	withSections: boolean,
): { view: ReadView; whole: boolean } {
	const { source } = doc;
	const { lines, blocks } = analyse(source);
	const { line: firstLine, at } = validate(args, lines, source, call.tool);
	const limit = args.limit ?? null;
	const shown: ReadView["shown"] = {
		fromLine: firstLine + 1,
		fromColumn: args.column ?? 1,
		toLine: firstLine,
		toColumn: null,
		lines: 0,
		stop: "end",
		limit,
	};
	const view: ReadView = {
		document: {
			id: oneLine(doc.id, 200),
			title: oneLine(doc.title, 200),
			url: oneLine(doc.url, 2048),
			revision: doc.revision,
			bytes: utf8Length(source, 0, source.length),
			lines: lines.count,
			blocks: blocks.length,
		},
		tool: call.tool,
		shown,
		next: null,
		blocks: { before: 0, after: 0, listed: [] },
		sections: withSections ? sectionsOf(blocks) : null,
		text: "",
	};

	// Reserve everything but the listed blocks and the text as if every number were as long as it can get.
	const big = Math.max(lines.count + 1, source.length + 1, blocks.length, limit ?? 0);
	const worst: ReadView = {
		...view,
		shown: { ...shown, fromColumn: big, toLine: big, toColumn: big, lines: big, stop: "budget" },
		next: { ...call.fixedArgs, offset: big, column: big, ...(limit !== null ? { limit } : {}) },
		blocks: { before: big, after: big, listed: [] },
	};
	const reserved = Math.max(
		Buffer.byteLength(formatReadView(worst)),
		Buffer.byteLength(formatReadView({ ...worst, next: null })),
	);
	let room = READ_BUDGET_BYTES - reserved;

	// Lines go in one by one with the blocks they start, so every line shown has its block listed.
	let firstListed = blocks.findIndex((b) => b.endLine > firstLine);
	if (firstListed < 0) firstListed = blocks.length;
	const listed: BlockEntry[] = [];
	let textEnd = at;
	let line = firstLine;
	while (line < lines.count) {
		if (limit !== null && shown.lines === limit) {
			shown.stop = "limit";
			break;
		}
		const entries: BlockEntry[] = [];
		for (let b = firstListed + listed.length; b < blocks.length && blocks[b]!.startLine <= line + 1; b++) {
			entries.push(entryOf(blocks[b]!));
		}
		const entriesCost = entries.reduce((sum, e) => sum + entryBytes(e), 0);
		const from = line === firstLine ? at : lines.starts[line]!;
		const cost = entriesCost + utf8Length(source, from, lines.ends[line]!);
		if (cost <= room) {
			listed.push(...entries);
			room -= cost;
			textEnd = lines.ends[line]!;
			shown.lines++;
			shown.toLine = ++line;
			continue;
		}
		shown.stop = "budget";
		// Only a result's first line is ever cut; a later line that does not fit starts the next result.
		if (line === firstLine) {
			listed.push(...entries);
			room -= entriesCost;
			textEnd = cutLine(source, from, lines.contentEnds[line]!, room);
			if (textEnd <= from) throw new Error("read view budget left no room for one character");
			room -= utf8Length(source, from, textEnd);
			shown.lines = 1;
			shown.toLine = line + 1;
			shown.toColumn = codePointCount(source, lines.starts[line]!, textEnd);
		}
		break;
	}
	view.text = source.slice(at, textEnd);
	if (shown.stop !== "end") {
		// The next call starts at the first character not shown: the line that did not fit, or the rest of a cut one.
		const next: Record<string, unknown> = { ...call.fixedArgs, offset: line + 1 };
		if (shown.toColumn !== null) next.column = shown.toColumn + 1;
		if (limit !== null) next.limit = limit;
		view.next = next;
	}

	// Room left widens the window of listed blocks by a few on each side of the lines shown, as context.
	let before = firstListed;
	let after = firstListed + listed.length;
	const lowest = before - CONTEXT_BLOCKS;
	const highest = after + CONTEXT_BLOCKS;
	for (let side = 0, stuck = 0; stuck < 2; side ^= 1) {
		const b = side === 0 ? after : before - 1;
		const e = b >= Math.max(0, lowest) && b < Math.min(blocks.length, highest) ? entryOf(blocks[b]!) : null;
		if (!e || entryBytes(e) > room) {
			stuck++;
			continue;
		}
		stuck = 0;
		room -= entryBytes(e);
		if (side === 0) {
			listed.push(e);
			after++;
		} else {
			listed.unshift(e);
			before--;
		}
	}
	view.blocks = { before, after: blocks.length - after, listed };
	return { view, whole: shown.stop === "end" && firstLine === 0 && at === 0 };
}

// The headings, in order, that fit the outline's own budget.
function sectionsOf(blocks: Block[]): ReadView["sections"] {
	const headings = blocks.filter((b) => b.kind === "heading").map(entryOf);
	if (!headings.length) return null;
	let used = Buffer.byteLength(sectionsHeading(headings.length, headings.length - 1)) + 2;
	const listed: BlockEntry[] = [];
	for (const e of headings) {
		const cost = Buffer.byteLength(formatSectionEntry(e)) + 1;
		if (used + cost > SECTIONS_BUDGET_BYTES) break;
		listed.push(e);
		used += cost;
	}
	return { total: headings.length, listed };
}

/** The structured view for one reading call; throws DocumentError for arguments out of range. */
export function buildReadView(
	doc: ReadDocument,
	args: ReadArgs = {},
	call: ReadCall = { tool: "read_plan" },
): ReadView {
	const first = draft(doc, args, call, false);
	// A document too large for one result shows its headings as an outline on its first page.
	const firstPage = args.offset === undefined && args.column === undefined;
	const view = first.whole || !firstPage ? first.view : draft(doc, args, call, true).view;
	const bytes = Buffer.byteLength(formatReadView(view));
	if (bytes > READ_BUDGET_BYTES) throw new Error(`read view over budget: ${bytes} bytes`);
	return view;
}

/** The text read_plan / read_child return: formatReadView(buildReadView(...)). */
export function renderReadView(
	doc: ReadDocument,
	args: ReadArgs = {},
	call: ReadCall = { tool: "read_plan" },
): string {
	return formatReadView(buildReadView(doc, args, call));
}
