/**
 * Any JSON value, and a JSON object, as the wire carries them (a tool's output, an answer's value, a tool's input
 * schema, a tool result). Checked by one plain recursive function rather than zod's z.json(), which walks every
 * node through a lazy union: in a turn frame that walk over the tools' input schemas was most of the client's parse
 * (docs/performance.md). It accepts exactly JSON: plain objects, arrays, strings, finite numbers, booleans, null.
 */
import { z } from "zod";
import { MAX_JSON_DEPTH } from "../json-depth";

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Whether value is JSON, nested at most MAX_JSON_DEPTH deep (a cycle is too deep, not a hang). */
export function isJsonValue(value: unknown, depth = 0): value is JsonValue {
	switch (typeof value) {
		case "string":
		case "boolean":
			return true;
		case "number":
			return Number.isFinite(value);
		case "object":
			break;
		default:
			return false;
	}
	if (value === null) return true;
	if (depth >= MAX_JSON_DEPTH) return false;
	if (Array.isArray(value)) {
		for (const item of value) if (!isJsonValue(item, depth + 1)) return false;
		return true;
	}
	if (!isPlainObject(value)) return false;
	for (const key in value) {
		if (!isJsonValue((value as Record<string, unknown>)[key], depth + 1)) return false;
	}
	return true;
}

function isPlainObject(value: object): boolean {
	const prototype = Object.getPrototypeOf(value);
	return prototype === Object.prototype || prototype === null;
}

export const jsonValueSchema = z.custom<JsonValue>((value) => isJsonValue(value), {
	message: "Expected a JSON value.",
});

export const jsonObjectSchema = z.custom<{ [key: string]: JsonValue }>(
	// isJsonValue already holds an object to being a plain one.
	(value) => isJsonValue(value) && typeof value === "object" && value !== null && !Array.isArray(value),
	{ message: "Expected a JSON object." },
);
