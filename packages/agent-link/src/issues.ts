/**
 * Turns a zod issue into one sentence naming the field path, without echoing the payload: a
 * peer reads it in an error message, and a log keeps it.
 */
import type { z } from "zod";

type Issue = z.core.$ZodIssue;
type Path = readonly PropertyKey[];

/** cards[0].stages[2].name */
export function formatPath(path: Path): string {
	let out = "";
	for (const key of path) {
		if (typeof key === "number") out += `[${key}]`;
		else out += out ? `.${clip(String(key))}` : clip(String(key));
	}
	return out;
}

/** A short, quoted rendering of a value the peer sent (a type or a key), cut to 40 characters. */
export function quote(value: unknown): string {
	if (typeof value !== "string")
		return typeof value === "object" ? (value === null ? "null" : "an object") : String(value);
	return JSON.stringify(clip(value));
}

function clip(text: string): string {
	return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

function valueAt(root: unknown, path: Path): unknown {
	let value = root;
	for (const key of path) {
		if (typeof value !== "object" || value === null) return undefined;
		value = (value as Record<PropertyKey, unknown>)[key];
	}
	return value;
}

function hasKeyAt(root: unknown, path: Path): boolean {
	if (path.length === 0) return true;
	const parent = valueAt(root, path.slice(0, -1));
	return (
		typeof parent === "object" &&
		parent !== null &&
		Object.hasOwn(parent, path[path.length - 1] as PropertyKey)
	);
}

const ARTICLES: Record<string, string> = {
	string: "a string",
	number: "a number",
	int: "an integer",
	boolean: "a boolean",
	object: "an object",
	record: "an object",
	array: "an array",
	null: "null",
	undefined: "absent",
};

function oneOf(values: readonly unknown[]): string {
	const shown = values.map((value) => (value === undefined ? "absent" : JSON.stringify(value)));
	if (shown.length === 1) return shown[0] as string;
	if (shown.length === 2) return `${shown[0]} or ${shown[1]}`;
	if (shown.length <= 10) return `one of ${shown.slice(0, -1).join(", ")} or ${shown[shown.length - 1]}`;
	return "a known value";
}

function plural(n: number, word: string): string {
	return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function entries(n: number): string {
	return n === 1 ? "1 entry" : `${n} entries`;
}

/** What is wrong with the field, as the end of a sentence whose subject is the field. */
function reason(issue: Issue, root: unknown, path: Path): string {
	switch (issue.code) {
		case "invalid_type":
			if (!hasKeyAt(root, path)) return "is required";
			return `must be ${ARTICLES[issue.expected] ?? issue.expected}`;
		case "too_big": {
			const max = Number(issue.maximum);
			if (issue.origin === "string") return `is longer than ${plural(max, "character")}`;
			if (issue.origin === "array") return `has more than ${entries(max)}`;
			return `must be at most ${max}`;
		}
		case "too_small": {
			const min = Number(issue.minimum);
			if (issue.origin === "string")
				return min === 1 ? "must not be empty" : `must be at least ${plural(min, "character")}`;
			if (issue.origin === "array") return `must have at least ${entries(min)}`;
			return min === 0 ? "must not be negative" : `must be at least ${min}`;
		}
		case "unrecognized_keys": {
			const [first, ...rest] = issue.keys;
			const more = rest.length ? ` (and ${rest.length} more)` : "";
			return `has an unknown field ${quote(first)}${more}`;
		}
		case "invalid_value":
			return `must be ${oneOf(issue.values)}`;
		case "invalid_union":
			if (issue.discriminator !== undefined) {
				if (!hasKeyAt(root, path)) return "is required";
				const options = (issue as { options?: unknown[] }).options ?? [];
				return `must be ${oneOf(options)}`;
			}
			return "is not valid";
		case "invalid_format":
		case "custom":
			// Our own checks and formats carry a reason written to follow the field's name.
			return issue.message.startsWith("Invalid") ? "has the wrong format" : issue.message;
		default:
			return "is not valid";
	}
}

/**
 * One sentence about the first issue: `Invalid turn message: tools[3].name must not be empty.`
 * label names what was parsed (`turn message`), root is its value, and rootName is what an
 * issue at the top is said of.
 */
export function describeIssues(
	label: string,
	issues: readonly Issue[],
	root: unknown,
	rootName = "the message",
): string {
	const issue = issues[0];
	if (!issue) return `Invalid ${label}.`;
	const path = issue.path as Path;
	const subject = path.length ? formatPath(path) : rootName;
	return `Invalid ${label}: ${subject} ${reason(issue, root, path)}.`;
}
