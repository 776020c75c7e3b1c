// The core of the edit_plan host tool: block edits named by {index, digest} from the latest read, applied all or nothing.
import { z } from "zod";
import { type Block, type BlockRef, blockRefSchema, DocumentError, splitBlocks } from "./blocks";

const markdownSchema = z
	.string()
	.regex(/\S/, "must not be blank (to remove a block, use op delete)")
	.describe("Markdown for one or more blocks. Blank lines around it are added as needed.");

export const replaceEditSchema = z
	.strictObject({ op: z.literal("replace"), block: blockRefSchema, markdown: markdownSchema })
	.describe("Replace a block's whole text.");
export const deleteEditSchema = z
	.strictObject({ op: z.literal("delete"), block: blockRefSchema })
	.describe("Delete a block.");
export const insertAfterEditSchema = z
	.strictObject({ op: z.literal("insert"), after: blockRefSchema, markdown: markdownSchema })
	.describe("Insert new blocks after a block.");
export const insertAtEditSchema = z
	.strictObject({ op: z.literal("insert"), at: z.enum(["start", "end"]), markdown: markdownSchema })
	.describe("Insert new blocks at the start or the end of the document.");

export const blockEditSchema = z.union([
	replaceEditSchema,
	deleteEditSchema,
	insertAfterEditSchema,
	insertAtEditSchema,
]);
export type BlockEdit = z.infer<typeof blockEditSchema>;

export const MAX_EDITS = 100;

export const editPlanInputSchema = z
	.strictObject({
		edits: z
			.array(blockEditSchema)
			.min(1)
			.max(MAX_EDITS)
			.describe(
				"Edits applied together, all or nothing. Every block is named by the index and digest of the same latest read, not as earlier edits in the list move it.",
			),
	})
	.describe("Edit the plan by blocks.");
export type EditPlanInput = z.infer<typeof editPlanInputSchema>;

/** The inputSchema edit_plan declares to the client. */
export const editPlanInputJsonSchema = z.toJSONSchema(editPlanInputSchema);

function invalid(where: string, message: string): DocumentError {
	return new DocumentError(
		"invalid-edit",
		`${where}: ${message}.`,
		'Each edit is {"op":"replace","block":{index,digest},"markdown"}, {"op":"delete","block":{index,digest}}, or {"op":"insert","after":{index,digest} or "at":"start"|"end","markdown"}.',
	);
}

// The one schema an edit is meant to match, by its op, or why none can be.
function schemaFor(edit: unknown): z.ZodType | string {
	const e = (typeof edit === "object" && edit !== null ? edit : {}) as Record<string, unknown>;
	switch (e.op) {
		case "replace":
			return replaceEditSchema;
		case "delete":
			return deleteEditSchema;
		case "insert":
			if ("after" in e === "at" in e)
				return 'an insert needs either after: {index, digest} or at: "start" | "end"';
			return "after" in e ? insertAfterEditSchema : insertAtEditSchema;
		default:
			return 'op must be "replace", "insert" or "delete"';
	}
}

/** edit_plan's arguments; throws a DocumentError (invalid-edit) naming the first thing wrong. */
export function parseEditPlanInput(input: unknown): EditPlanInput {
	const parsed = editPlanInputSchema.safeParse(input);
	if (parsed.success) return parsed.data;
	// A union's own error lists every branch; explain a wrong edit by the op it meant instead.
	const edits = (input as { edits?: unknown } | null)?.edits;
	if (Array.isArray(edits)) {
		for (const [i, edit] of edits.entries()) {
			const schema = schemaFor(edit);
			if (typeof schema === "string") throw invalid(`edits[${i}]`, schema);
			const result = schema.safeParse(edit);
			const issue = result.error?.issues[0];
			if (issue) throw invalid([`edits[${i}]`, ...issue.path].join("."), issue.message);
		}
	}
	const issue = parsed.error.issues[0]!;
	throw invalid(issue.path.join(".") || "input", issue.message);
}

/** A block as edit results report it: where it is now and the digest to name it by. */
export interface BlockSummary {
	index: number;
	startLine: number;
	endLine: number;
	kind: string;
	digest: string;
}

export const summarize = ({ index, startLine, endLine, kind, digest }: Block): BlockSummary => ({
	index,
	startLine,
	endLine,
	kind,
	digest,
});

export type EditResult =
	| {
			ok: true;
			source: string;
			/** Every block of the new source. */
			blocks: Block[];
			/** New blocks whose text is new: replacements, insertions, and neighbours they merged with. */
			changed: BlockSummary[];
			/** Blocks of the old source that are gone as they were: deleted, replaced, or merged into a changed one. */
			removed: BlockRef[];
			/** Runs of untouched blocks: old indexes from..from+count-1 are now to..to+count-1, same digests. */
			kept: { from: number; to: number; count: number }[];
	  }
	| { ok: false; error: DocumentError };

const short = (digest: string) => `${digest.slice(0, 19)}…`;

function checkRef(blocks: Block[], ref: BlockRef, where: string): DocumentError | null {
	const hint = "Read the plan again with read_plan and name blocks by the indexes and digests it lists.";
	const block = blocks[ref.index];
	if (!block) {
		return new DocumentError(
			"block-changed",
			`${where} names block #${ref.index}, but the document now has ${blocks.length} block${blocks.length === 1 ? "" : "s"}: it has changed since it was read.`,
			hint,
		);
	}
	if (block.digest !== ref.digest) {
		return new DocumentError(
			"block-changed",
			`${where} names block #${ref.index} as ${short(ref.digest)}, but that block has changed since it was read (it is now ${short(block.digest)}).`,
			hint,
		);
	}
	return null;
}

// New text sits between blocks: no blank lines at its ends, and the document's own line breaks.
function normaliseMarkdown(markdown: string, eol: string): string {
	return markdown
		.replace(/^(?:[ \t]*(?:\r\n|\r|\n))+/, "")
		.replace(/[ \t\r\n]+$/, "")
		.replace(/\r\n|\r|\n/g, eol);
}

/**
 * Applies edits to source, all or nothing. Every edit names blocks of source as it is now (the
 * latest read), never as earlier edits in the list leave it; a block may be replaced or deleted
 * once; inserts after the same place keep their order. Untouched neighbours keep the separator
 * between them; anywhere text was added or removed, blocks are separated by one blank line.
 */
export function applyEdits(source: string, edits: readonly BlockEdit[]): EditResult {
	const blocks = splitBlocks(source);
	const removing = new Map<number, { edit: BlockEdit; at: number }>();
	const after = new Map<number, string[]>();
	const atStart: string[] = [];
	const atEnd: string[] = [];
	const eol = /\r\n|\r|\n/.exec(source)?.[0] ?? "\n";

	for (const [i, edit] of edits.entries()) {
		const where = `edits[${i}] (${edit.op})`;
		const ref = "block" in edit ? edit.block : "after" in edit ? edit.after : null;
		const refError = ref && checkRef(blocks, ref, where);
		if (refError) return { ok: false, error: refError };
		if (edit.op === "replace" || edit.op === "delete") {
			const earlier = removing.get(edit.block.index);
			if (earlier) {
				return {
					ok: false,
					error: new DocumentError(
						"edit-conflict",
						`${where} names block #${edit.block.index}, which edits[${earlier.at}] (${earlier.edit.op}) already names.`,
						"Replace or delete each block at most once per call; put all of a block's new text in one replace.",
					),
				};
			}
			removing.set(edit.block.index, { edit, at: i });
		} else if ("after" in edit) {
			after.set(edit.after.index, [
				...(after.get(edit.after.index) ?? []),
				normaliseMarkdown(edit.markdown, eol),
			]);
		} else {
			(edit.at === "start" ? atStart : atEnd).push(normaliseMarkdown(edit.markdown, eol));
		}
	}

	// The new document as a row of entries: old blocks kept as they are, and new text.
	const entries: { text: string; old?: number }[] = atStart.map((text) => ({ text }));
	for (const block of blocks) {
		const edit = removing.get(block.index)?.edit;
		if (!edit) entries.push({ text: block.text, old: block.index });
		else if (edit.op === "replace") entries.push({ text: normaliseMarkdown(edit.markdown, eol) });
		for (const text of after.get(block.index) ?? []) entries.push({ text });
	}
	for (const text of atEnd) entries.push({ text });

	let next = "";
	const placed: { start: number; end: number; old?: number }[] = [];
	if (entries.length) {
		next = blocks.length ? source.slice(0, blocks[0]!.start) : "";
		for (const [k, entry] of entries.entries()) {
			const prev = entries[k - 1];
			if (prev) {
				const adjacent = prev.old !== undefined && entry.old === prev.old + 1;
				next += adjacent ? source.slice(blocks[prev.old!]!.end, blocks[entry.old!]!.start) : eol + eol;
			}
			placed.push({ start: next.length, end: next.length + entry.text.length, old: entry.old });
			next += entry.text;
		}
		next += blocks.length ? source.slice(blocks.at(-1)!.end) : eol;
	}

	// An old block is kept when its text is still exactly one block; everything else is new or gone.
	const nextBlocks = splitBlocks(next);
	const byStart = new Map(nextBlocks.map((b) => [b.start, b]));
	const keptOld = new Map<number, number>();
	for (const p of placed) {
		const b = p.old === undefined ? undefined : byStart.get(p.start);
		if (b && b.end === p.end) keptOld.set(p.old!, b.index);
	}
	const keptNew = new Set(keptOld.values());
	const kept: { from: number; to: number; count: number }[] = [];
	for (const [from, to] of keptOld) {
		const run = kept.at(-1);
		if (run && run.from + run.count === from && run.to + run.count === to) run.count++;
		else kept.push({ from, to, count: 1 });
	}
	return {
		ok: true,
		source: next,
		blocks: nextBlocks,
		changed: nextBlocks.filter((b) => !keptNew.has(b.index)).map(summarize),
		removed: blocks.filter((b) => !keptOld.has(b.index)).map(({ index, digest }) => ({ index, digest })),
		kept,
	};
}
