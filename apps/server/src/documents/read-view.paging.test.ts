import { describe, expect, test } from "bun:test";
import { lineTable, splitBlocks } from "./blocks";
import { buildReadView, formatReadView, READ_BUDGET_BYTES, type ReadArgs, type ReadCall } from "./read-view";

const doc = (source: string) => ({
	id: "doc_big",
	title: "Big plan",
	url: "http://127.0.0.1/d/doc_big",
	revision: 1,
	source,
});
const DELIMITER = /\n--- the document's text from [^\n]*, verbatim ---\n/;

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** Follows next: from args until the end, checking every result, and returns the text it saw and how many pages. */
function pageThrough(source: string, args: ReadArgs = {}, call: ReadCall = { tool: "read_plan" }) {
	const blocks = splitBlocks(source);
	let out = "";
	let pages = 0;
	for (let current: ReadArgs | null = args; current; pages++) {
		if (pages > 5000) throw new Error("paging does not end");
		const view = buildReadView(doc(source), current, call);
		const result = formatReadView(view);
		expect(Buffer.byteLength(result)).toBeLessThanOrEqual(READ_BUDGET_BYTES);
		const match = DELIMITER.exec(result)!;
		const text = result.slice(match.index + match[0].length);
		expect(text).toBe(view.text);
		// Never half a surrogate pair at either end, so never half a UTF-8 sequence either.
		if (text) {
			expect(isLow(text.charCodeAt(0)) && isHigh(out.charCodeAt(out.length - 1))).toBe(false);
			expect(isHigh(text.charCodeAt(text.length - 1))).toBe(false);
		}
		// Every line shown has its block listed, with the digest the document has.
		const listed = new Map(view.blocks.listed.map((e) => [e.index, e.digest]));
		for (const b of blocks) {
			if (view.shown.lines && b.endLine >= view.shown.fromLine && b.startLine <= view.shown.toLine) {
				expect(listed.get(b.index)).toBe(b.digest);
			}
		}
		const nextLine = /\nnext: ([^\n]*)/.exec(result)![1]!;
		if (nextLine.startsWith("none")) {
			current = null;
		} else {
			expect(text.length).toBeGreaterThan(0);
			expect(nextLine.startsWith(`${call.tool} `)).toBe(true);
			const next = JSON.parse(nextLine.slice(call.tool.length + 1)) as Record<string, unknown>;
			expect(next).toEqual(view.next!);
			const { offset, column, limit, ...fixed } = next as ReadArgs & Record<string, unknown>;
			expect(fixed).toEqual(call.fixedArgs ?? {});
			current = { offset, column, limit };
		}
		out += text;
	}
	return { out, pages };
}

// mulberry32: a small seeded PRNG, so a failure names a seed that reproduces it.
function prng(seed: number) {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

const EMOJI = ["😀", "🚀", "👩‍👩‍👧‍👦", "🇫🇷", "👍🏽", "❤️"];
const CJK = "漢字仮名交じり文中文한국어";

function repeatTo(unit: string, chars: number): string {
	return unit
		.repeat(Math.ceil(chars / unit.length))
		.slice(0, chars)
		.replace(/[\ud800-\udbff]$/, "x");
}

describe("paging a large document by following next:", () => {
	const parts: string[] = ["# A large plan", ""];
	for (let i = 0; i < 120; i++) {
		parts.push(
			`## Part ${i} ${EMOJI[i % EMOJI.length]}`,
			"",
			`${CJK} ${"words and more words ".repeat(30)}${EMOJI[i % 6]}`,
			"",
		);
		if (i % 10 === 0) parts.push("```ts", `const x${i} = "${"y".repeat(300)}";`, "", "", "```", "");
		if (i % 15 === 0) parts.push("- item one", "  - nested 漢字", "- item two", "");
	}
	parts.push(repeatTo("lorem ipsum dolor ", 50_000), "");
	parts.push(repeatTo(CJK, 50_000), "");
	parts.push(repeatTo(EMOJI.join(""), 50_000), "");
	parts.push(repeatTo("e\u0301", 20_000), "");
	parts.push("| a | b |", "|---|---|", `| ${"cell ".repeat(2000)} | 😀 |`, "", "The end.");
	const big = parts.join("\n");

	test("the document is over 300 KB with 50,000-character lines", () => {
		expect(Buffer.byteLength(big)).toBeGreaterThan(300_000);
	});

	test("returns every character exactly once, in order, each result within 16,000 bytes", () => {
		const { out, pages } = pageThrough(big);
		expect(out).toBe(big);
		expect(pages).toBeGreaterThan(20);
	});

	test("with a limit and with read_child's fixed arguments", () => {
		expect(pageThrough(big, { limit: 7 }).out).toBe(big);
		expect(pageThrough(big, {}, { tool: "read_child", fixedArgs: { document: "doc_child" } }).out).toBe(big);
	});

	test("the same with CRLF line breaks", () => {
		const crlf = big.replace(/\n/g, "\r\n");
		expect(pageThrough(crlf).out).toBe(crlf);
	});

	test("a long line is cut after a space when one is near, and continued by column", () => {
		const lines = lineTable(big);
		const longLine = big.split("\n").findIndex((l) => l.startsWith("lorem ipsum"));
		const view = buildReadView(doc(big), { offset: longLine + 1 });
		expect(view.shown.toColumn).not.toBeNull();
		expect(view.text.endsWith(" ")).toBe(true);
		expect(view.next).toEqual({ offset: longLine + 1, column: view.shown.toColumn! + 1 });
		const rest = buildReadView(doc(big), view.next as ReadArgs);
		expect(big.slice(lines.starts[longLine]!).startsWith(view.text + rest.text)).toBe(true);
	});

	test("a long line of emoji is cut between characters and, where it can be, between clusters", () => {
		const emojiLine = big.split("\n").findIndex((l) => l.startsWith(EMOJI[0]!));
		const view = buildReadView(doc(big), { offset: emojiLine + 1 });
		const last = view.text.codePointAt(view.text.length - 2);
		expect(view.text.length).toBeGreaterThan(1000);
		expect(last === undefined || last !== 0x200d).toBe(true);
		expect(isHigh(view.text.charCodeAt(view.text.length - 1))).toBe(false);
	});
});

describe("exactly once, over random documents (seeded)", () => {
	const pieces = [
		() => "# Heading",
		() => "plain words here",
		() => "",
		() => "   ",
		() => "- list item",
		() => "  - nested",
		() => "```",
		() => "> quote",
		() => "| a | b |",
		() => "|---|---|",
		() => "<div>",
		() => "---",
	];
	function randomDocument(rnd: () => number): string {
		const eol = ["\n", "\r\n", "\n", "\n"][Math.floor(rnd() * 4)]!;
		let out = "";
		const lineCount = Math.floor(rnd() * 400);
		for (let i = 0; i < lineCount; i++) {
			const r = rnd();
			let line: string;
			if (r < 0.6) line = pieces[Math.floor(rnd() * pieces.length)]!();
			else if (r < 0.75)
				line = repeatTo(EMOJI[Math.floor(rnd() * EMOJI.length)]!, 1 + Math.floor(rnd() * 200));
			else if (r < 0.9) line = repeatTo(CJK, 1 + Math.floor(rnd() * 300));
			else if (r < 0.97) line = repeatTo(rnd() < 0.5 ? "ab " : "漢😀", Math.floor(rnd() * 30_000));
			else line = "\u0000\t\u2028x\u00a0";
			out += line + (i < lineCount - 1 || rnd() < 0.5 ? eol : "");
		}
		return out;
	}

	for (let seed = 1; seed <= 40; seed++) {
		test(`seed ${seed}`, () => {
			const rnd = prng(seed);
			const source = randomDocument(rnd);
			const limit = rnd() < 0.3 ? 1 + Math.floor(rnd() * 50) : undefined;
			expect(pageThrough(source, { limit }).out).toBe(source);
			// Starting anywhere (a line, and a character in it) pages through exactly the rest.
			const lines = lineTable(source);
			if (lines.count) {
				const line = Math.floor(rnd() * lines.count);
				const chars = [...source.slice(lines.starts[line]!, lines.contentEnds[line]!)];
				const column = 1 + Math.floor(rnd() * (chars.length + 1));
				const from = lines.starts[line]! + chars.slice(0, column - 1).join("").length;
				expect(pageThrough(source, { offset: line + 1, column, limit }).out).toBe(source.slice(from));
			}
		});
	}
});
