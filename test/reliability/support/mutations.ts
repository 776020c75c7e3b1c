// Hostile variations of a real example: one change at one place in it (a field dropped, a type changed, a huge
// or strange string, a wrong enum value, an extra field, a number out of range, junk nested up to 50 deep), and
// whole frames that are not JSON at all. Credentials planted in strings let a test check no answer echoes them.
import fc, { type Arbitrary } from "fast-check";

type Path = (string | number)[];

/** Every place in a JSON value: the root and each field and item below it. */
export function pathsOf(value: unknown, prefix: Path = []): Path[] {
	const paths: Path[] = [prefix];
	if (Array.isArray(value)) {
		for (const [i, item] of value.entries()) paths.push(...pathsOf(item, [...prefix, i]));
	} else if (value && typeof value === "object")
		for (const [key, item] of Object.entries(value)) paths.push(...pathsOf(item, [...prefix, key]));
	return paths;
}

/** Strings a parser may trip on: control and zero-width characters, lone surrogates, right-to-left, NUL. */
export const strangeStrings: Arbitrary<string> = fc.oneof(
	fc.constantFrom(
		"",
		"\u0000",
		"\ud800",
		"\udfff\ud800",
		"\u202e\u2066evil",
		"\ufeff\u200b\u200d",
		"👩‍👩‍👧‍👦".repeat(50),
		"e\u0301".repeat(100),
		"\r\n\t\u2028\u2029",
		"<script>alert(1)</script>",
		"../../../../etc/passwd",
		"%00%2e%2e%2f",
		"$(id)",
		"{{7*7}}",
		"__proto__",
		"constructor",
	),
	fc.string({ unit: "binary", maxLength: 64 }),
);

/** Strings that look like numbers or special values. */
export const nanishStrings = fc.constantFrom(
	"NaN",
	"Infinity",
	"-Infinity",
	"1e999",
	"-0",
	"0x10",
	"1_000",
	"9007199254740993",
	"null",
	"undefined",
	"true",
	" 1 ",
);

/** Numbers outside any sensible range (JSON has no NaN or Infinity: they become null). */
export const wildNumbers = fc.constantFrom(
	-1,
	-0,
	0.5,
	1e308,
	-1e308,
	2 ** 53 + 2,
	-(2 ** 53) - 2,
	2 ** 31,
	2 ** 32,
	Number.MIN_VALUE,
	Number.NaN,
	Number.POSITIVE_INFINITY,
);

/** A string of 64 KiB to 1 MiB (the agent link takes frames up to 2 MiB; the control channel 256 KiB). */
export const hugeStrings = fc
	.tuple(fc.integer({ min: 16, max: 20 }), fc.constantFrom("a", "é", "😀", "\\", '"'))
	.map(([bits, unit]) => unit.repeat(Math.floor(2 ** bits / Buffer.byteLength(unit))));

/** Arrays and objects nested up to 50 deep (deeper nesting is issue 16 item 4's). */
export const nestedJunk = fc
	.tuple(fc.integer({ min: 2, max: 50 }), fc.boolean(), fc.jsonValue({ maxDepth: 1 }))
	.map(([depth, arrays, leaf]) => {
		let value: unknown = leaf;
		for (let i = 0; i < depth; i++) value = arrays ? [value] : { a: value };
		return value;
	});

/** Any JSON-ish value of another kind than a field's. */
export function junkValues(plant?: Arbitrary<string>): Arbitrary<unknown> {
	return fc.oneof(
		fc.constantFrom(null, true, false, 0, [], {}, ""),
		wildNumbers,
		nanishStrings,
		strangeStrings,
		fc.jsonValue({ maxDepth: 2 }),
		nestedJunk,
		...(plant ? [plant, plant.map((token) => ({ token }))] : []),
	);
}

type Mutation = (value: unknown, path: Path, rnd: MutationInputs) => unknown;

interface MutationInputs {
	junk: unknown;
	key: string;
	text: string;
}

function setAt(value: unknown, path: Path, change: (old: unknown, parent: unknown) => unknown): unknown {
	// A JSON round trip, not structuredClone: generated objects may have a null prototype.
	const root = JSON.parse(JSON.stringify(value) ?? "null") as unknown;
	if (path.length === 0) return change(root, undefined);
	let parent = root as Record<string | number, unknown>;
	for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>;
	const last = path[path.length - 1]!;
	const next = change(parent[last], parent);
	if (next === DROP) {
		if (Array.isArray(parent)) parent.splice(last as number, 1);
		else delete parent[last];
	} else parent[last] = next;
	return root;
}

const DROP = Symbol("drop");

const mutations: Record<string, Mutation> = {
	drop: (v, p) => setAt(v, p, () => DROP),
	retype: (v, p, r) => setAt(v, p, () => r.junk),
	extraField: (v, p, r) =>
		setAt(v, p, (old) =>
			old && typeof old === "object" && !Array.isArray(old) ? { ...old, [r.key]: r.junk } : r.junk,
		),
	replaceString: (v, p, r) => setAt(v, p, (old) => (typeof old === "string" ? r.text : r.junk)),
	appendString: (v, p, r) => setAt(v, p, (old) => (typeof old === "string" ? old + r.text : r.junk)),
	wrapInArray: (v, p) => setAt(v, p, (old) => [old]),
	duplicateItem: (v, p) => setAt(v, p, (old) => (Array.isArray(old) ? [...old, ...old] : old)),
};

/** One or two mutations of the example, each at a place chosen in it. */
export function mutationsOf(example: unknown, plant?: Arbitrary<string>): Arbitrary<unknown> {
	const paths = pathsOf(example);
	const text = fc.oneof(
		strangeStrings,
		nanishStrings,
		fc.string({ maxLength: 32 }),
		{ arbitrary: hugeStrings, weight: 1 },
		...(plant ? [plant] : []),
	);
	const one = fc.record({
		mutation: fc.constantFrom(...Object.keys(mutations)),
		path: fc.constantFrom(...paths),
		junk: junkValues(plant),
		key: fc.oneof(
			fc.constantFrom("__proto__", "constructor", "type", "extra", ""),
			fc.string({ maxLength: 8 }),
		),
		text,
	});
	return fc.array(one, { minLength: 1, maxLength: 2 }).map((steps) => {
		let value = example;
		for (const step of steps) {
			// A second step's path may be gone after the first; such a step changes the root instead.
			try {
				value = mutations[step.mutation]!(value, step.path, step);
			} catch {
				value = mutations[step.mutation]!(value, [], step);
			}
		}
		return value;
	});
}

/** Frames that are not a JSON object: broken JSON, other JSON values, empty, huge. */
export const brokenFrames: Arbitrary<string> = fc.oneof(
	fc.constantFrom("", "{", "}", "[]", "null", "1", '"attach"', '{"type":', "{'type':'attach'}", "\u0000"),
	fc.string({ unit: "binary", maxLength: 128 }),
	fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? "null"),
	fc.jsonValue({ maxDepth: 2 }).map((v) => (JSON.stringify(v) ?? "").slice(0, -1)),
);

/** Strings carrying one of the tokens: alone, as a bearer, inside text, URL-encoded. */
export function plantedStrings(tokens: readonly string[]): Arbitrary<string> {
	return fc
		.tuple(fc.constantFrom(...tokens), fc.constantFrom("raw", "bearer", "inside", "query"))
		.map(([token, how]) =>
			how === "raw"
				? token
				: how === "bearer"
					? `Bearer ${token}`
					: how === "inside"
						? `use ${token} please`
						: `?token=${encodeURIComponent(token)}`,
		);
}
