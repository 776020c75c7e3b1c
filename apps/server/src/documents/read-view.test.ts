import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { DocumentError, splitBlocks } from "./blocks";
import {
	buildReadView,
	formatReadView,
	READ_BUDGET_BYTES,
	type ReadArgs,
	readArgsSchema,
	renderReadView,
} from "./read-view";

const doc = (source: string, extra: Partial<{ id: string; title: string; url: string }> = {}) => ({
	id: "doc_1",
	title: "Rollout plan",
	url: "http://127.0.0.1:3000/d/doc_1",
	revision: 7,
	source,
	...extra,
});

const DELIMITER = /\n--- the document's text from [^\n]*, verbatim ---\n/;

/** The parts of a result a client relies on: its header lines, its verbatim text, and the next call. */
function parse(result: string) {
	const match = DELIMITER.exec(result);
	if (!match) throw new Error(`no text delimiter in:\n${result}`);
	const head = result.slice(0, match.index);
	const header = Object.fromEntries(
		head
			.split("\n\n")[0]!
			.split("\n")
			.map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 2)]),
	) as Record<string, string>;
	const next = header.next!.startsWith("none") ? null : header.next!;
	return { head, header, text: result.slice(match.index + match[0].length), next };
}

const SMALL = "# Rollout plan\n\nWe ship in two steps.\n\n## Steps\n\n- one\n- two\n\n```sh\nbun test\n```\n";

describe("a small document", () => {
	test("comes whole in one result, in the documented format", () => {
		const blocks = splitBlocks(SMALL);
		const d = (i: number) => blocks[i]!.digest;
		expect(renderReadView(doc(SMALL))).toBe(
			[
				"document: Rollout plan",
				"id: doc_1",
				"url: http://127.0.0.1:3000/d/doc_1",
				"revision: 7",
				"size: 81 bytes, 12 lines, 5 blocks",
				"shown: lines 1-12 of 12; this is the end of the document",
				"next: none, this is the end of the document",
				"",
				"blocks (#index lines kind digest, then how the block starts): all 5",
				`#0 line 1 heading ${d(0)} "# Rollout plan"`,
				`#1 line 3 paragraph ${d(1)} "We ship in two steps."`,
				`#2 line 5 heading ${d(2)} "## Steps"`,
				`#3 lines 7-8 list ${d(3)} "- one"`,
				`#4 lines 10-12 code ${d(4)} "\`\`\`sh"`,
				"",
				"--- the document's text from line 1, verbatim ---",
				SMALL,
			].join("\n"),
		);
	});

	test("the structured view carries the same facts", () => {
		const view = buildReadView(doc(SMALL));
		expect(view.document).toEqual({
			id: "doc_1",
			title: "Rollout plan",
			url: "http://127.0.0.1:3000/d/doc_1",
			revision: 7,
			bytes: 81,
			lines: 12,
			blocks: 5,
		});
		expect(view.next).toBeNull();
		expect(view.text).toBe(SMALL);
		expect(view.sections).toBeNull();
		expect(view.blocks.listed.map((e) => e.index)).toEqual([0, 1, 2, 3, 4]);
	});

	test("an empty document says so", () => {
		const { header, text, next } = parse(renderReadView(doc("")));
		expect(header.size).toBe("0 bytes, 0 lines, 0 blocks");
		expect(header.shown).toBe("nothing, the document is empty");
		expect(text).toBe("");
		expect(next).toBeNull();
	});

	test("a document without a final line break keeps it that way", () => {
		expect(parse(renderReadView(doc("# T\n\nlast line"))).text).toBe("# T\n\nlast line");
	});

	test("CRLF comes back as CRLF", () => {
		const crlf = SMALL.replace(/\n/g, "\r\n");
		expect(parse(renderReadView(doc(crlf))).text).toBe(crlf);
	});
});

describe("offset, limit and column", () => {
	const source = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n\n");

	test("limit gives at most that many lines and next continues with the same limit", () => {
		const first = parse(renderReadView(doc(source), { limit: 5 }));
		expect(first.text).toBe("line 1\n\nline 2\n\nline 3\n");
		expect(first.header.shown).toBe("lines 1-5 of 59; stopped at limit 5 lines");
		expect(first.next).toBe('read_plan {"offset":6,"limit":5}');
		const second = parse(renderReadView(doc(source), { offset: 6, limit: 5 }));
		expect(second.text).toBe("\nline 4\n\nline 5\n\n");
	});

	test("a limit that reaches the last line ends the document", () => {
		const last = parse(renderReadView(doc(source), { offset: 57, limit: 3 }));
		expect(last.text).toBe("line 29\n\nline 30");
		expect(last.header.shown).toBe("lines 57-59 of 59; this is the end of the document");
		expect(last.next).toBeNull();
	});

	test("offset one past the last line is the end, with nothing shown", () => {
		const end = parse(renderReadView(doc(source), { offset: 60 }));
		expect(end.text).toBe("");
		expect(end.header.shown).toBe("nothing, line 60 is past the last line");
		expect(end.next).toBeNull();
	});

	test("the block holding the offset line is listed even when it starts earlier", () => {
		const fenced = "intro\n\n```\na\nb\nc\n```\n\nafter\n";
		const view = buildReadView(doc(fenced), { offset: 5, limit: 1 });
		expect(view.text).toBe("b\n");
		expect(view.blocks.listed.map((e) => [e.index, e.kind])).toContainEqual([1, "code"]);
	});

	test("column starts inside a line, counting characters, not UTF-16 units or bytes", () => {
		const line = "😀漢字 and more";
		const view = buildReadView(doc(`${line}\nsecond\n`), { offset: 1, column: 3, limit: 1 });
		expect(view.text).toBe("字 and more\n");
		expect(renderReadView(doc(`${line}\n`), { column: 2 })).toContain(
			"--- the document's text from line 1 column 2, verbatim ---",
		);
	});

	test("column one past a line's last character shows its line break alone", () => {
		expect(buildReadView(doc("abc\ndef\n"), { offset: 1, column: 4, limit: 1 }).text).toBe("\n");
	});

	test("read_child names itself and repeats its fixed arguments in next", () => {
		const view = renderReadView(
			doc(source),
			{ limit: 2 },
			{ tool: "read_child", fixedArgs: { document: "doc_9" } },
		);
		expect(parse(view).next).toBe('read_child {"document":"doc_9","offset":3,"limit":2}');
		// read_child's own arguments may come along; only the paging ones are checked here.
		const args = { document: "doc_9", offset: 3, limit: 2 } as ReadArgs;
		expect(buildReadView(doc(source), args, { tool: "read_child" }).text).toBe("line 2\n\n");
	});
});

describe("argument errors", () => {
	const source = "one\ntwo\nthree 😀\n";
	const error = (args: ReadArgs) => {
		try {
			renderReadView(doc(source), args);
		} catch (e) {
			expect(e).toBeInstanceOf(DocumentError);
			return e as DocumentError;
		}
		throw new Error("expected an error");
	};

	test("offset past the end", () => {
		const e = error({ offset: 5 });
		expect(e.code).toBe("offset-out-of-range");
		expect(e.message).toBe("offset 5 is past the end: the document has 3 lines, so offset can be 1 to 4.");
		expect(e.hint).toBeTruthy();
	});

	test("column past the end of its line", () => {
		const e = error({ offset: 3, column: 9 });
		expect(e.code).toBe("column-out-of-range");
		expect(e.message).toBe(
			"column 9 is past the end of line 3, which has 7 characters (column can be 1 to 8).",
		);
		expect(error({ offset: 4, column: 2 }).code).toBe("column-out-of-range");
	});

	test("numbers that are not whole and at least 1", () => {
		for (const args of [{ offset: 0 }, { limit: 0 }, { column: 0 }, { offset: 1.5 }, { limit: -1 }]) {
			const e = error(args as ReadArgs);
			expect(e.code).toBe("invalid-read-arguments");
			expect(e.message).toMatch(/^(offset|limit|column): /);
		}
		expect(error({ offset: "2" } as unknown as ReadArgs).code).toBe("invalid-read-arguments");
	});

	test("the arguments schema exports as JSON Schema for a host tool's inputSchema", () => {
		const schema = z.toJSONSchema(readArgsSchema) as {
			properties: Record<string, { type: string; minimum: number }>;
		};
		expect(Object.keys(schema.properties)).toEqual(["offset", "limit", "column"]);
		expect(schema.properties.offset).toMatchObject({ type: "integer", minimum: 1 });
	});
});

describe("budget", () => {
	test("every result stays within 16,000 UTF-8 bytes, even with a huge title, id and url", () => {
		const huge = "T".repeat(50_000);
		const source = Array.from({ length: 2000 }, (_, i) => `p${i}`).join("\n\n");
		const result = renderReadView(doc(source, { title: huge, id: huge, url: `http://x/${huge}` }));
		expect(Buffer.byteLength(result)).toBeLessThanOrEqual(READ_BUDGET_BYTES);
		expect(parse(result).header.document).toBe(`${"T".repeat(200)}…`);
	});

	test("a result that stops for the budget says so and lists the block of every line it shows", () => {
		const source = Array.from({ length: 3000 }, (_, i) => `Paragraph ${i} with some words in it.`).join(
			"\n\n",
		);
		const view = buildReadView(doc(source));
		const { header, text } = parse(renderReadView(doc(source)));
		expect(header.shown).toMatch(/; stopped at the 16000-byte limit of one result$/);
		const blocks = splitBlocks(source);
		const shownLast = view.shown.toLine;
		const touching = blocks.filter((b) => b.endLine >= view.shown.fromLine && b.startLine <= shownLast);
		const listed = new Set(view.blocks.listed.map((e) => e.index));
		for (const b of touching) expect(listed.has(b.index)).toBe(true);
		expect(source.startsWith(text)).toBe(true);
	});

	test("a large document's first page adds an outline of its headings; later pages do not", () => {
		const source = Array.from({ length: 400 }, (_, i) => `## Section ${i}\n\n${"words ".repeat(40)}\n`).join(
			"\n",
		);
		const first = renderReadView(doc(source));
		expect(first).toContain("sections (the document's headings): 400 in all, the first ");
		expect(first).toContain('#0 line 1 "## Section 0"');
		expect(renderReadView(doc(source), { offset: 1 })).not.toContain("sections (");
		expect(renderReadView(doc(SMALL))).not.toContain("sections (");
	});

	test("the block list is a window around the lines shown and says how many are left out", () => {
		const source = Array.from({ length: 500 }, (_, i) => `block ${i}`).join("\n\n");
		const view = buildReadView(doc(source), { offset: 501, limit: 1 });
		expect(view.text).toBe("block 250\n");
		const listed = view.blocks.listed.map((e) => e.index);
		expect(listed).toEqual([245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255]);
		expect(view.blocks).toMatchObject({ before: 245, after: 244 });
		expect(renderReadView(doc(source), { offset: 501, limit: 1 })).toContain(
			"blocks (#index lines kind digest, then how the block starts): 500 in all; 245 before and 244 after these are not listed (read with offset to see them)",
		);
	});
});

describe("the budget's edge", () => {
	test("documents around the largest one result holds whole stay within the budget", () => {
		// A one-letter tool makes a next: call shorter than "none, this is the end of the document".
		let whole = 0;
		for (let n = 15_000; n < 15_600; n++) {
			const view = buildReadView(doc("x".repeat(n)), {}, { tool: "r" });
			expect(Buffer.byteLength(formatReadView(view))).toBeLessThanOrEqual(READ_BUDGET_BYTES);
			if (view.next === null) whole = n;
		}
		expect(whole).toBeGreaterThan(15_000);
		expect(whole).toBeLessThan(15_599);
	});
});
