import { describe, expect, test } from "bun:test";
import { readPlanFacts, summarize } from "./summary";

// The shape read_plan sends a remote Planner (apps/server/src/documents/read-view.ts, formatReadView).
const PAGE = [
	"document: Launch plan",
	"id: doc_1",
	"url: http://chopin.test/d/doc_1",
	"revision: 1",
	"size: 40 bytes, 3 lines, 2 blocks",
	"shown: lines 1-3 of 3; this is the end of the document",
	"next: none, this is the end of the document",
	"",
	"blocks (#index lines kind digest, then how the block starts): all 2",
	'#0 line 1 heading sha256:ab "# Launch plan"',
	'#1 line 3 paragraph sha256:cd "Ship on Friday."',
	"",
	"--- the document's text from line 1, verbatim ---",
	"Intro without a heading",
	"",
	"## Launch plan ##",
	"# Later",
].join("\n");

describe("the document summary", () => {
	test("reads the title, the block count and the first heading of the document's own text", () => {
		const facts = readPlanFacts(PAGE);
		expect(facts).toEqual({ title: "Launch plan", blocks: 2, heading: "Launch plan" });
		expect(summarize(facts)).toBe('"Launch plan" has 2 blocks; its first heading is "Launch plan".');
	});

	test("one block, no heading", () => {
		const page = PAGE.replace("2 blocks", "1 block").split("--- the document")[0]!;
		expect(summarize(readPlanFacts(page))).toBe('"Launch plan" has 1 block.');
	});

	test("a result that is not the paged text gives a plain sentence", () => {
		expect(readPlanFacts({ title: "x" })).toEqual({});
		expect(summarize({})).toBe("I read the document.");
		expect(summarize({ title: "Plan" })).toBe('I read "Plan".');
	});
});
