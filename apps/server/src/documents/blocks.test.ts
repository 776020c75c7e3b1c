import { describe, expect, test } from "bun:test";
import { marked } from "marked";
import {
	type Block,
	digestCount,
	digestRepeats,
	digestText,
	findBlock,
	lineTable,
	resolveAnchor,
	splitBlocks,
} from "./blocks";

// Rebuilds the source from the blocks and the separators between them, checking the tiling rules on the way.
function retile(source: string, blocks: Block[]): string {
	const lines = lineTable(source);
	let out = "";
	let at = 0;
	for (const [i, b] of blocks.entries()) {
		expect(b.index).toBe(i);
		const sep = source.slice(at, b.start);
		expect(sep).toMatch(/^[ \t\r\n]*$/);
		expect(b.start).toBe(lines.starts[b.startLine - 1]!);
		expect(b.end).toBe(lines.contentEnds[b.endLine - 1]!);
		expect(b.text).toBe(source.slice(b.start, b.end));
		const lineText = (n: number) => source.slice(lines.starts[n - 1]!, lines.contentEnds[n - 1]!);
		expect(lineText(b.startLine)).toMatch(/[^ \t]/);
		expect(lineText(b.endLine)).toMatch(/[^ \t]/);
		expect(b.digest).toBe(digestText(b.text));
		out += sep + b.text;
		at = b.end;
	}
	expect(source.slice(at)).toMatch(/^[ \t\r\n]*$/);
	return out + source.slice(at);
}

const shape = (blocks: Block[]) => blocks.map((b) => [b.kind, b.startLine, b.endLine]);

describe("lineTable", () => {
	test("counts lines the way CommonMark does", () => {
		expect(lineTable("").count).toBe(0);
		expect(lineTable("a").count).toBe(1);
		expect(lineTable("a\n").count).toBe(1);
		expect(lineTable("a\n\n").count).toBe(2);
		expect(lineTable("a\r\nb").count).toBe(2);
		expect(lineTable("a\rb\r").count).toBe(2);
		const t = lineTable("ab\r\ncd\ne");
		expect(t.starts).toEqual([0, 4, 7]);
		expect(t.contentEnds).toEqual([2, 6, 8]);
		expect(t.ends).toEqual([4, 7, 8]);
	});
});

describe("splitBlocks", () => {
	const doc = [
		"# Rollout plan",
		"Intro paragraph",
		"still the intro.",
		"",
		"- one",
		"- two",
		"  - nested",
		"",
		"  more of two",
		"",
		"```js",
		"const a = 1;",
		"",
		"",
		"const b = 2;",
		"```",
		"",
		"| a | b |",
		"|---|---|",
		"| 1 | 2 |",
		"",
		"> quoted",
		"> still quoted",
		"",
		"<div>",
		"html",
		"</div>",
		"",
		"---",
		"",
		"[ref]: https://example.com",
		"",
		"Setext",
		"======",
		"",
		"    indented code",
		"",
		"last",
		"",
	].join("\n");

	test("one block per top-level token, with lines, text and digest", () => {
		const blocks = splitBlocks(doc);
		expect(shape(blocks)).toEqual([
			["heading", 1, 1],
			["paragraph", 2, 3],
			["list", 5, 9],
			["code", 11, 16],
			["table", 18, 20],
			["blockquote", 22, 23],
			["html", 25, 27],
			["hr", 29, 29],
			["def", 31, 31],
			["heading", 33, 34],
			["code", 36, 36],
			["paragraph", 38, 38],
		]);
		expect(blocks[3]!.text).toBe("```js\nconst a = 1;\n\n\nconst b = 2;\n```");
		expect(blocks[2]!.text).toBe("- one\n- two\n  - nested\n\n  more of two");
		expect(retile(doc, blocks)).toBe(doc);
	});

	test("the digest is SHA-256 of the block's text as UTF-8, without its line break", () => {
		const [block] = splitBlocks("Grüße 😀 漢字\n");
		const hex = new Bun.CryptoHasher("sha256")
			.update(new TextEncoder().encode("Grüße 😀 漢字"))
			.digest("hex");
		expect(block!.digest).toBe(`sha256:${hex}`);
		expect(block!.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
	});

	test("a trailing newline, or none, changes no block", () => {
		const a = splitBlocks("# T\n\ntext");
		const b = splitBlocks("# T\n\ntext\n");
		const c = splitBlocks("# T\n\ntext\n\n\n");
		expect(a.map((x) => x.digest)).toEqual(b.map((x) => x.digest));
		expect(b.map((x) => x.digest)).toEqual(c.map((x) => x.digest));
		expect(retile("# T\n\ntext\n\n\n", c)).toBe("# T\n\ntext\n\n\n");
	});

	test("CRLF is kept: same lines as LF, the text keeps its CRLF, so the digests differ", () => {
		const lf = "# T\n\npara one\npara two\n\n- a\n- b\n";
		const crlf = lf.replace(/\n/g, "\r\n");
		const a = splitBlocks(lf);
		const b = splitBlocks(crlf);
		expect(shape(b)).toEqual(shape(a));
		expect(b[1]!.text).toBe("para one\r\npara two");
		expect(b[0]!.digest).toBe(a[0]!.digest);
		expect(b[1]!.digest).not.toBe(a[1]!.digest);
		expect(retile(crlf, b)).toBe(crlf);
		const cr = lf.replace(/\n/g, "\r");
		expect(shape(splitBlocks(cr))).toEqual(shape(a));
		expect(retile(cr, splitBlocks(cr))).toBe(cr);
	});

	test("an empty or blank document has no blocks", () => {
		expect(splitBlocks("")).toEqual([]);
		expect(splitBlocks("\n\n  \n\t\n")).toEqual([]);
	});

	test("blank lines with spaces and leading blank lines are separators", () => {
		const source = "\n  \n# T\n \t\npara\n   \n";
		const blocks = splitBlocks(source);
		expect(shape(blocks)).toEqual([
			["heading", 3, 3],
			["paragraph", 5, 5],
		]);
		expect(retile(source, blocks)).toBe(source);
	});

	test("an unclosed fence runs to the end; its trailing blank lines stay outside the block", () => {
		const source = "intro\n\n```\ncode\n\n\n";
		const blocks = splitBlocks(source);
		expect(shape(blocks)).toEqual([
			["paragraph", 1, 1],
			["code", 3, 4],
		]);
		expect(retile(source, blocks)).toBe(source);
	});

	test("input marked rewrites (a blank last line after HTML) still tiles", () => {
		for (const source of ["<!X>\n\t", "<!X>\n\tfoo", "para\n    code\n[x]: /u\n\n[y]: /v\n"]) {
			expect(retile(source, splitBlocks(source))).toBe(source);
		}
	});

	test("tiling holds for random documents (seeded)", () => {
		const pieces = [
			"# h",
			"para *text*",
			"",
			"",
			"  ",
			"- item",
			"  - nested",
			"1. one",
			"```",
			"~~~",
			"    code",
			"> quote",
			"| a | b |",
			"|---|---|",
			"<div>",
			"</div>",
			"<!-- c -->",
			"---",
			"===",
			"[x]: http://a",
			"emoji 😀 漢字",
			"\t",
			"<!X>",
			"\f",
		];
		let seed = 7;
		const rnd = () => {
			seed = (seed * 1103515245 + 12345) & 0x7fffffff;
			return seed / 0x7fffffff;
		};
		for (let n = 0; n < 3000; n++) {
			let source = "";
			const count = Math.floor(rnd() * 20);
			for (let i = 0; i < count; i++) {
				source +=
					pieces[Math.floor(rnd() * pieces.length)]! + ["\n", "\r\n", "\n", "\r"][Math.floor(rnd() * 4)];
			}
			if (rnd() < 0.3) source = source.replace(/[\r\n]+$/, "");
			const blocks = splitBlocks(source);
			expect(retile(source, blocks)).toBe(source);
			for (let i = 1; i < blocks.length; i++)
				expect(blocks[i]!.startLine).toBeGreaterThan(blocks[i - 1]!.endLine);
		}
	});
});

describe("long lines", () => {
	// What marked makes of the whole text, as [kind, first line, last line]: the reference for long lines.
	function markedShape(source: string) {
		const spans: [string, number, number][] = [];
		let at = 0;
		for (const token of marked.lexer(source)) {
			const raw = token.raw;
			const from = at + raw.search(/[^ \t\n]/);
			const to = at + raw.trimEnd().length;
			at += raw.length;
			if (token.type === "space") continue;
			const line = (i: number) => source.slice(0, i).split("\n").length;
			spans.push([token.type, line(from), line(to - 1)]);
		}
		return spans;
	}
	const words = (n: number) => "lorem ipsum dolor sit amet ".repeat(n / 27 + 1).slice(0, n);
	const cases: Record<string, string> = {
		paragraphs: `${words(2500)}\n\n${words(1200)}\nnext line\n\nend\n`,
		"wide table": `| ${Array.from({ length: 60 }, (_, i) => `column ${i} ${words(20)}`).join(" | ")} |\n|${"---|".repeat(60)}\n| ${"cell | ".repeat(60)}\n\nafter\n`,
		"a table row that is not a table": `| ${"a | ".repeat(300)}\n|---|---|\n\nafter\n`,
		"html comment on a long line": `<!-- ${words(3000)} -->\nstill html?\n\nparagraph\n`,
		"unclosed comment": `<!-- ${words(3000)}\nmore\n-->\n\nparagraph\n`,
		"setext headings": `${words(2000)}\n---\n\n${words(2000)}\n===\n\ntext\n`,
		"list with long items": `- ${words(3000)}\n  - nested ${words(1500)}\n- short\n\n${words(1100)}\n`,
		"block quote": `> ${words(2000)}\n> ${words(1500)}\n\nafter\n`,
		"spaces then text": `${" ".repeat(1500)}x\n\nafter\n`,
		"escaped pipes": `| a \\| b ${words(1500)} | c |\n|---|---|\n| 1 | 2 |\n`,
	};
	for (const [name, source] of Object.entries(cases)) {
		test(`lines over 1,000 characters give marked's blocks: ${name}`, () => {
			const blocks = splitBlocks(source);
			expect(shape(blocks)).toEqual(markedShape(source));
			expect(retile(source, blocks)).toBe(source);
		});
	}

	test("a 50,000-character line, a deep quote and a deep list still split", () => {
		for (const source of [
			words(50_000),
			"> ".repeat(20_000),
			"1. ".repeat(20_000),
			`${"x".repeat(50_000)}\n---\n`,
		]) {
			expect(retile(source, splitBlocks(source))).toBe(source);
		}
	});
});

describe("finding a block again", () => {
	const source = "# A\n\nsame\n\nother\n\nsame\n";
	const blocks = splitBlocks(source);

	test("findBlock matches index and digest", () => {
		expect(findBlock(blocks, { index: 2, digest: blocks[2]!.digest })).toBe(blocks[2]!);
		expect(findBlock(blocks, { index: 2, digest: blocks[1]!.digest })).toBeUndefined();
		expect(findBlock(blocks, { index: 9, digest: blocks[1]!.digest })).toBeUndefined();
	});

	test("a digest repeats when identical text appears twice", () => {
		expect(digestCount(blocks, blocks[1]!.digest)).toBe(2);
		expect(digestRepeats(blocks, blocks[1]!.digest)).toBe(true);
		expect(digestRepeats(blocks, blocks[2]!.digest)).toBe(false);
	});

	test("resolveAnchor says where a question's cards go", () => {
		expect(resolveAnchor(blocks, { index: 2, digest: blocks[2]!.digest }).block).toBe(blocks[2]!);
		expect(resolveAnchor(blocks, { index: 1, digest: blocks[1]!.digest })).toEqual({
			block: null,
			reason: "repeated",
		});
		expect(resolveAnchor(blocks, { index: 2, digest: blocks[0]!.digest })).toEqual({
			block: null,
			reason: "changed",
		});
		const edited = splitBlocks(source.replace("other", "other, edited"));
		expect(resolveAnchor(edited, { index: 2, digest: blocks[2]!.digest }).reason).toBe("changed");
		const isCard = (b: Block) => b.text.startsWith("# ");
		expect(resolveAnchor(blocks, { index: 0, digest: blocks[0]!.digest }, isCard)).toEqual({
			block: null,
			reason: "decision-card",
		});
	});
});
