import { describe, expect, test } from "bun:test";
import { exceedsJsonDepth, MAX_JSON_DEPTH, parseJsonWithin } from "./json-depth";

const nested = (depth: number, open = "[", close = "]") => open.repeat(depth) + close.repeat(depth);

describe("exceedsJsonDepth", () => {
	test("counts arrays and objects alike, up to the limit and one past it", () => {
		expect(exceedsJsonDepth(nested(MAX_JSON_DEPTH))).toBe(false);
		expect(exceedsJsonDepth(nested(MAX_JSON_DEPTH + 1))).toBe(true);
		const objects = `${'{"a":'.repeat(MAX_JSON_DEPTH + 1)}1${"}".repeat(MAX_JSON_DEPTH + 1)}`;
		expect(exceedsJsonDepth(objects)).toBe(true);
		expect(exceedsJsonDepth(objects, MAX_JSON_DEPTH + 1)).toBe(false);
		expect(exceedsJsonDepth('{"a":[{"b":[]}]}', 4)).toBe(false);
		expect(exceedsJsonDepth('{"a":[{"b":[]}]}', 3)).toBe(true);
	});

	test("siblings do not add up: depth is nesting, not a count of brackets", () => {
		expect(exceedsJsonDepth(JSON.stringify(Array.from({ length: 10_000 }, () => [[1]])), 3)).toBe(false);
	});

	test("brackets inside strings, escaped quotes and backslashes included, do not count", () => {
		const text = JSON.stringify({ a: "[[[[{{{{", b: 'say "[[[" \\', c: '\\\\"[[[[' });
		expect(exceedsJsonDepth(text, 1)).toBe(false);
		expect(exceedsJsonDepth(JSON.stringify(["\\", "[[["]), 1)).toBe(false);
		expect(exceedsJsonDepth(JSON.stringify([nested(500)]), 1)).toBe(false);
	});

	test("9,000 and 1,000,000 deep are refused without recursion", () => {
		expect(exceedsJsonDepth(nested(9000))).toBe(true);
		expect(exceedsJsonDepth(nested(1_000_000))).toBe(true);
	});

	test("text that is not JSON gets an answer and never throws", () => {
		expect(exceedsJsonDepth('"never closed [[[[')).toBe(false);
		expect(exceedsJsonDepth("]]]]")).toBe(false);
		expect(exceedsJsonDepth("")).toBe(false);
	});
});

describe("parseJsonWithin", () => {
	test("parses JSON within the limit, refuses deeper text before parsing, and names invalid text", () => {
		expect(parseJsonWithin('{"a":[1,2]}')).toEqual({ ok: true, value: { a: [1, 2] } });
		expect(parseJsonWithin(nested(9000))).toEqual({ ok: false, reason: "too-deep" });
		expect(parseJsonWithin("{nope")).toEqual({ ok: false, reason: "invalid" });
	});
});
