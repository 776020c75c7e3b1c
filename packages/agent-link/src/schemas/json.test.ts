// The JSON fields' check (json.ts): exactly what JSON can carry, as zod's z.json() accepted, without its walk.
import { describe, expect, test } from "bun:test";
import { MAX_JSON_DEPTH } from "../json-depth";
import { isJsonValue, jsonObjectSchema, jsonValueSchema } from "./json";

function nested(depth: number): unknown {
	let value: unknown = 1;
	for (let i = 0; i < depth; i++) value = [value];
	return value;
}

describe("JSON values", () => {
	test("JSON is accepted: strings, finite numbers, booleans, null, arrays, plain objects, nested", () => {
		for (const value of ["", "x", 0, -1.5, true, false, null, [], {}, { a: [1, { b: null }], c: "d" }]) {
			expect(isJsonValue(value)).toBe(true);
			expect(jsonValueSchema.safeParse(value).success).toBe(true);
		}
		expect(isJsonValue(Object.create(null))).toBe(true);
		expect(isJsonValue(JSON.parse('{"__proto__": {"a": 1}}'))).toBe(true);
	});

	test("what JSON cannot carry is refused, inside objects and arrays too", () => {
		const cyclic: Record<string, unknown> = {};
		cyclic.self = cyclic;
		const refused = [
			undefined,
			Number.NaN,
			Number.POSITIVE_INFINITY,
			10n,
			Symbol("s"),
			() => 1,
			new Date(0),
			new Map(),
			{ a: undefined },
			[1, Number.NaN],
			{ deep: [{ when: new Date(0) }] },
			cyclic,
		];
		for (const value of refused) {
			expect(isJsonValue(value)).toBe(false);
			expect(jsonValueSchema.safeParse(value).success).toBe(false);
		}
	});

	test(`nesting deeper than ${MAX_JSON_DEPTH} is refused, as the frame's depth rule does`, () => {
		expect(isJsonValue(nested(MAX_JSON_DEPTH))).toBe(true);
		expect(isJsonValue(nested(MAX_JSON_DEPTH + 1))).toBe(false);
	});

	test("a JSON object is a plain object, never an array or null", () => {
		expect(jsonObjectSchema.safeParse({ type: "object", properties: {} }).success).toBe(true);
		for (const value of [[], null, "x", 1, new Date(0), { a: Number.NaN }]) {
			expect(jsonObjectSchema.safeParse(value).success).toBe(false);
		}
	});
});
