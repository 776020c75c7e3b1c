import { describe, expect, test } from "bun:test";
import { splitBlocks } from "./blocks";
import { PLAN_SUMMARY_BYTES, planSummaryJson, planSummarySchema } from "./plan-summary";

const plan = (source: string, title = "Rollout plan") => ({
	id: "doc_1",
	title,
	url: "http://127.0.0.1:3000/d/doc_1",
	revision: 4,
	source,
});
const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

describe("current_plan", () => {
	test("a small plan carries its source and blocks", () => {
		const source = "# Plan\n\nShip it.\n";
		const summary = planSummaryJson(plan(source));
		const [heading, paragraph] = splitBlocks(source);
		expect(summary).toEqual({
			id: "doc_1",
			title: "Rollout plan",
			url: "http://127.0.0.1:3000/d/doc_1",
			revision: 4,
			size: { bytes: 17, lines: 3, blocks: 2 },
			blocks: [
				{ index: 0, startLine: 1, endLine: 1, kind: "heading", digest: heading!.digest },
				{ index: 1, startLine: 3, endLine: 3, kind: "paragraph", digest: paragraph!.digest },
			],
			source,
			source_omitted: false,
		});
		expect(planSummarySchema.parse(summary)).toEqual(summary);
	});

	test("a plan over 8,000 bytes of JSON leaves out source and blocks and says so", () => {
		const source = Array.from({ length: 300 }, (_, i) => `Paragraph ${i} 漢字 😀`).join("\n\n");
		const summary = planSummaryJson(plan(source));
		expect(summary.source).toBeUndefined();
		expect(summary.blocks).toBeUndefined();
		expect(summary.source_omitted).toBe(true);
		expect(summary.size).toEqual({ bytes: Buffer.byteLength(source), lines: 599, blocks: 300 });
		expect(summary.note).toBe(
			`The plan is ${Buffer.byteLength(source)} bytes, over the 8000 bytes current_plan carries; read it with read_plan.`,
		);
		expect(bytes(summary)).toBeLessThanOrEqual(PLAN_SUMMARY_BYTES);
	});

	test("the limit is on the JSON's UTF-8 bytes, exactly", () => {
		const source = "é".repeat(3000);
		const full = planSummaryJson(plan(source), 1_000_000);
		expect(planSummaryJson(plan(source), bytes(full)).source_omitted).toBe(false);
		expect(planSummaryJson(plan(source), bytes(full) - 1).source_omitted).toBe(true);
	});

	test("an absurd title is cut rather than break the limit", () => {
		const summary = planSummaryJson(plan("x".repeat(9000), "T".repeat(20_000)));
		expect(summary.source_omitted).toBe(true);
		expect(bytes(summary)).toBeLessThanOrEqual(PLAN_SUMMARY_BYTES);
		expect(summary.title).toStartWith("TTTT");
	});
});
