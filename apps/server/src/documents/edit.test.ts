import { describe, expect, test } from "bun:test";
import { type BlockRef, DocumentError, splitBlocks } from "./blocks";
import {
	applyEdits,
	type BlockEdit,
	type EditResult,
	editPlanInputJsonSchema,
	parseEditPlanInput,
} from "./edit";

const SOURCE = "# Plan\n\nFirst paragraph.\n\n- a\n- b\n\n```sh\nbun test\n```\n\nLast paragraph.\n";
const blocks = splitBlocks(SOURCE);
const ref = (index: number): BlockRef => ({ index, digest: blocks[index]!.digest });

function ok(result: EditResult) {
	if (!result.ok) throw new Error(`expected success, got ${result.error.code}: ${result.error.message}`);
	return result;
}
function failed(result: EditResult) {
	if (result.ok) throw new Error("expected an error");
	expect(result.error).toBeInstanceOf(DocumentError);
	return result.error;
}

describe("each operation", () => {
	test("replace swaps one block's text and keeps every other block as it was", () => {
		const r = ok(
			applyEdits(SOURCE, [{ op: "replace", block: ref(1), markdown: "A better first paragraph." }]),
		);
		expect(r.source).toBe(SOURCE.replace("First paragraph.", "A better first paragraph."));
		expect(r.changed).toEqual([
			{ index: 1, startLine: 3, endLine: 3, kind: "paragraph", digest: r.blocks[1]!.digest },
		]);
		expect(r.removed).toEqual([ref(1)]);
		expect(r.kept).toEqual([
			{ from: 0, to: 0, count: 1 },
			{ from: 2, to: 2, count: 3 },
		]);
		for (const i of [0, 2, 3, 4]) expect(r.blocks[i]!.digest).toBe(blocks[i]!.digest);
	});

	test("replace with several blocks moves the later ones along", () => {
		const r = ok(
			applyEdits(SOURCE, [{ op: "replace", block: ref(2), markdown: "## Steps\n\n- a\n- b\n- c\n" }]),
		);
		expect(r.source).toBe(SOURCE.replace("- a\n- b\n", "## Steps\n\n- a\n- b\n- c\n"));
		expect(r.changed.map((b) => [b.index, b.kind])).toEqual([
			[2, "heading"],
			[3, "list"],
		]);
		expect(r.kept).toEqual([
			{ from: 0, to: 0, count: 2 },
			{ from: 3, to: 4, count: 2 },
		]);
	});

	test("insert after a block, at the start and at the end", () => {
		const after = ok(applyEdits(SOURCE, [{ op: "insert", after: ref(0), markdown: "Intro." }]));
		expect(after.source).toBe(SOURCE.replace("# Plan\n\n", "# Plan\n\nIntro.\n\n"));
		expect(after.changed.map((b) => b.index)).toEqual([1]);
		expect(after.removed).toEqual([]);
		const start = ok(applyEdits(SOURCE, [{ op: "insert", at: "start", markdown: "Draft." }]));
		expect(start.source).toBe(`Draft.\n\n${SOURCE}`);
		const end = ok(applyEdits(SOURCE, [{ op: "insert", at: "end", markdown: "## Appendix" }]));
		expect(end.source).toBe(`${SOURCE.trimEnd()}\n\n## Appendix\n`);
		expect(end.changed).toEqual([
			{ index: 5, startLine: 14, endLine: 14, kind: "heading", digest: end.blocks[5]!.digest },
		]);
	});

	test("delete removes a block and one of the separators around it", () => {
		const r = ok(applyEdits(SOURCE, [{ op: "delete", block: ref(3) }]));
		expect(r.source).toBe("# Plan\n\nFirst paragraph.\n\n- a\n- b\n\nLast paragraph.\n");
		expect(r.changed).toEqual([]);
		expect(r.removed).toEqual([ref(3)]);
		expect(ok(applyEdits(SOURCE, [{ op: "delete", block: ref(0) }])).source).toBe(
			SOURCE.slice("# Plan\n\n".length),
		);
	});

	test("deleting every block leaves an empty document", () => {
		const all = blocks.map((_, i): BlockEdit => ({ op: "delete", block: ref(i) }));
		expect(ok(applyEdits(SOURCE, all)).source).toBe("");
	});

	test("an empty document takes an insert at the start or end", () => {
		const r = ok(applyEdits("", [{ op: "insert", at: "end", markdown: "# New plan" }]));
		expect(r.source).toBe("# New plan\n");
		expect(r.changed.map((b) => b.kind)).toEqual(["heading"]);
	});

	test("new text loses blank lines at its ends and takes the document's line breaks", () => {
		const crlf = SOURCE.replace(/\n/g, "\r\n");
		const r = ok(
			applyEdits(crlf, [
				{
					op: "insert",
					after: { index: 0, digest: splitBlocks(crlf)[0]!.digest },
					markdown: "\n\nOne\ntwo\n\n\n",
				},
			]),
		);
		expect(r.source).toBe(crlf.replace("# Plan\r\n\r\n", "# Plan\r\n\r\nOne\r\ntwo\r\n\r\n"));
	});

	test("text that joins a neighbour is reported with it", () => {
		const r = ok(applyEdits(SOURCE, [{ op: "insert", after: ref(2), markdown: "- c" }]));
		expect(r.source).toBe(SOURCE.replace("- a\n- b\n", "- a\n- b\n\n- c\n"));
		expect(r.changed.map((b) => [b.index, b.kind, b.startLine, b.endLine])).toEqual([[2, "list", 5, 8]]);
		expect(r.removed).toEqual([ref(2)]);
	});

	test("a separator the document had between untouched blocks stays as it was", () => {
		const source = "a\n\n\n\nb\n\nc\n";
		const [a, b] = splitBlocks(source);
		const r = ok(
			applyEdits(source, [
				{ op: "replace", block: { index: 2, digest: splitBlocks(source)[2]!.digest }, markdown: "C" },
			]),
		);
		expect(r.source).toBe("a\n\n\n\nb\n\nC\n");
		expect(r.blocks[0]!.digest).toBe(a!.digest);
		expect(r.blocks[1]!.digest).toBe(b!.digest);
	});
});

describe("several edits in one call", () => {
	test("all name blocks of the same read and apply together", () => {
		const r = ok(
			applyEdits(SOURCE, [
				{ op: "delete", block: ref(0) },
				{ op: "replace", block: ref(2), markdown: "- x\n- y" },
				{ op: "insert", after: ref(2), markdown: "After the list." },
				{ op: "insert", after: ref(2), markdown: "And again." },
				{ op: "insert", at: "end", markdown: "The end." },
				{ op: "insert", at: "start", markdown: "# Renamed" },
			]),
		);
		expect(r.source).toBe(
			"# Renamed\n\nFirst paragraph.\n\n- x\n- y\n\nAfter the list.\n\nAnd again.\n\n```sh\nbun test\n```\n\nLast paragraph.\n\nThe end.\n",
		);
		expect(r.removed).toEqual([ref(0), ref(2)]);
		expect(r.changed.map((b) => b.index)).toEqual([0, 2, 3, 4, 7]);
		expect(r.kept).toEqual([
			{ from: 1, to: 1, count: 1 },
			{ from: 3, to: 5, count: 2 },
		]);
	});

	test("are all or nothing: one stale block fails the call and nothing else applies", () => {
		const edits: BlockEdit[] = [
			{ op: "replace", block: ref(1), markdown: "Changed." },
			{ op: "delete", block: { index: 3, digest: blocks[4]!.digest } },
		];
		const error = failed(applyEdits(SOURCE, edits));
		expect(error.code).toBe("block-changed");
		expect(error.message).toStartWith("edits[1] (delete) names block #3 as sha256:");
		expect(error.message).toContain("but that block has changed since it was read");
	});

	test("replacing or deleting the same block twice is a conflict", () => {
		const error = failed(
			applyEdits(SOURCE, [
				{ op: "replace", block: ref(1), markdown: "One." },
				{ op: "delete", block: ref(1) },
			]),
		);
		expect(error.code).toBe("edit-conflict");
		expect(error.message).toBe("edits[1] (delete) names block #1, which edits[0] (replace) already names.");
		expect(error.hint).toBeTruthy();
	});
});

describe("stale blocks", () => {
	test("a digest that no longer matches says the block changed and to read again", () => {
		const edited = SOURCE.replace("First paragraph.", "Someone else's words.");
		const error = failed(applyEdits(edited, [{ op: "replace", block: ref(1), markdown: "Mine." }]));
		expect(error.code).toBe("block-changed");
		expect(error.hint).toBe(
			"Read the plan again with read_plan and name blocks by the indexes and digests it lists.",
		);
	});

	test("an index past the last block says how many there are now", () => {
		const error = failed(applyEdits("# Only\n", [{ op: "insert", after: ref(4), markdown: "x" }]));
		expect(error.code).toBe("block-changed");
		expect(error.message).toBe(
			"edits[0] (insert) names block #4, but the document now has 1 block: it has changed since it was read.",
		);
	});
});

describe("random edits (seeded)", () => {
	const pieces = [
		"# Title",
		"para",
		"more text",
		"",
		"",
		"- item",
		"  - nested",
		"```",
		"> quote",
		"| a |",
		"|---|",
		"<div>",
		"---",
		"1. one",
	];
	let seed = 11;
	const rnd = () => {
		seed = (seed * 1103515245 + 12345) & 0x7fffffff;
		return seed / 0x7fffffff;
	};
	const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;

	test("results tile, and what they call kept is kept", () => {
		for (let n = 0; n < 500; n++) {
			const eol = pick(["\n", "\r\n"]);
			const source =
				Array.from({ length: Math.floor(rnd() * 30) }, () => pick(pieces)).join(eol) + pick(["", eol]);
			const old = splitBlocks(source);
			const edits: BlockEdit[] = [];
			const named = new Set<number>();
			for (let k = Math.floor(rnd() * 5); k >= 0; k--) {
				const i = Math.floor(rnd() * (old.length + 1));
				const at = { index: i, digest: old[i]?.digest ?? "" };
				const markdown =
					Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => pick(pieces)).join("\n") || "x";
				const op = i < old.length ? pick(["replace", "delete", "insert"] as const) : "end";
				if (op === "end")
					edits.push({ op: "insert", at: pick(["start", "end"] as const), markdown: `${markdown} tail` });
				else if (op === "insert") edits.push({ op, after: at, markdown: `${markdown} tail` });
				else if (!named.has(i)) {
					named.add(i);
					edits.push(op === "replace" ? { op, block: at, markdown: `${markdown} tail` } : { op, block: at });
				}
			}
			const r = ok(applyEdits(source, edits));
			const next = splitBlocks(r.source);
			expect(r.blocks).toEqual(next);
			for (const run of r.kept) {
				for (let k = 0; k < run.count; k++) expect(next[run.to + k]!.digest).toBe(old[run.from + k]!.digest);
			}
			const keptNew = r.kept.flatMap((run) => Array.from({ length: run.count }, (_, k) => run.to + k));
			const keptOld = r.kept.flatMap((run) => Array.from({ length: run.count }, (_, k) => run.from + k));
			expect([...keptNew, ...r.changed.map((b) => b.index)].sort((a, b) => a - b)).toEqual(
				next.map((b) => b.index),
			);
			expect([...keptOld, ...r.removed.map((b) => b.index)].sort((a, b) => a - b)).toEqual(
				old.map((b) => b.index),
			);
			for (const i of named) expect(keptOld).not.toContain(i);
		}
	});
});

describe("edit_plan input", () => {
	const digest = blocks[0]!.digest;
	const reason = (input: unknown) => {
		try {
			parseEditPlanInput(input);
		} catch (e) {
			expect(e).toBeInstanceOf(DocumentError);
			expect((e as DocumentError).code).toBe("invalid-edit");
			return (e as DocumentError).message;
		}
		throw new Error("expected invalid input");
	};

	test("parses each shape", () => {
		const input = {
			edits: [
				{ op: "replace", block: { index: 0, digest }, markdown: "x" },
				{ op: "delete", block: { index: 1, digest } },
				{ op: "insert", after: { index: 0, digest }, markdown: "y" },
				{ op: "insert", at: "end", markdown: "z" },
			],
		};
		expect(parseEditPlanInput(input)).toEqual(input as never);
	});

	test("says which edit is wrong and why", () => {
		expect(reason({ edits: [] })).toStartWith("edits: ");
		expect(reason({})).toStartWith("edits: ");
		expect(reason({ edits: [{ op: "move", block: { index: 0, digest } }] })).toBe(
			'edits[0]: op must be "replace", "insert" or "delete".',
		);
		expect(reason({ edits: [{ op: "insert", markdown: "x" }] })).toBe(
			'edits[0]: an insert needs either after: {index, digest} or at: "start" | "end".',
		);
		expect(reason({ edits: [{ op: "delete", block: { index: 0, digest: "sha256:abc" } }] })).toBe(
			"edits[0].block.digest: must be sha256: followed by 64 lowercase hex digits, as read_plan gave it.",
		);
		expect(
			reason({
				edits: [
					{ op: "delete", block: { index: 0, digest } },
					{ op: "replace", block: { index: 1, digest }, markdown: " \n" },
				],
			}),
		).toBe("edits[1].markdown: must not be blank (to remove a block, use op delete).");
		expect(reason({ edits: [{ op: "delete", block: { index: -1, digest } }] })).toStartWith(
			"edits[0].block.index: ",
		);
	});

	test("exports a JSON Schema for the tool's inputSchema", () => {
		const schema = editPlanInputJsonSchema as unknown as {
			type: string;
			required: string[];
			properties: { edits: { items: { anyOf: { properties: { op: { const: string } } }[] } } };
		};
		expect(schema.type).toBe("object");
		expect(schema.required).toEqual(["edits"]);
		expect(schema.properties.edits.items.anyOf.map((s) => s.properties.op.const)).toEqual([
			"replace",
			"delete",
			"insert",
			"insert",
		]);
		expect(JSON.stringify(schema)).toContain('"pattern":"^sha256:[0-9a-f]{64}$"');
	});
});
