// fast-check arbitraries derived from zod v4 schemas by walking their definitions (the zod-fast-check bridge
// reads only zod v3). Values mostly fit the schema, so a fuzz case reaches past the first check; refinements
// and formats it cannot honour make some values invalid, which a hostile-input test welcomes.
import fc, { type Arbitrary } from "fast-check";

/** The part of a zod v4 schema this walker reads: `_zod.def`, whose `type` names the kind. */
export interface ZodLike {
	_zod: { def: object };
}

interface ZodDef {
	type: string;
	checks?: { _zod: { def: CheckDef } }[];
	[key: string]: unknown;
}

interface CheckDef {
	check: string;
	minimum?: number;
	maximum?: number;
	value?: number;
	inclusive?: boolean;
	format?: string;
	pattern?: RegExp;
}

export interface ArbitraryOptions {
	/** Strings a string field sometimes takes instead (credentials to plant, say). */
	plant?: Arbitrary<string>;
	/** Arrays get at most this many items (default 3), whatever the schema allows. */
	maxItems?: number;
}

/** An arbitrary of values shaped by the schema. */
export function arbitraryFor(schema: ZodLike, options: ArbitraryOptions = {}): Arbitrary<unknown> {
	return walk(schema, { maxItems: options.maxItems ?? 3, plant: options.plant }, 0);
}

interface Walk {
	maxItems: number;
	plant: Arbitrary<string> | undefined;
}

const child = (value: unknown) => value as ZodLike;

function walk(schema: ZodLike, w: Walk, depth: number): Arbitrary<unknown> {
	const def = schema._zod.def as ZodDef;
	const checks = (def.checks ?? []).map((c) => c._zod.def);
	// Recursive schemas (JSON values, nested parts) stop growing here.
	if (depth > 12) return fc.constant(null);
	switch (def.type) {
		case "string":
			return stringFor(def, checks, w);
		case "number":
			return numberFor(def, checks);
		case "bigint":
			return fc.bigInt().map(String);
		case "boolean":
			return fc.boolean();
		case "null":
			return fc.constant(null);
		case "undefined":
		case "void":
			return fc.constant(undefined);
		case "literal":
			return fc.constantFrom(...(def.values as unknown[]));
		case "enum":
			return fc.constantFrom(...Object.values(def.entries as Record<string, unknown>));
		case "object":
			return objectFor(def.shape as Record<string, ZodLike>, w, depth);
		case "array": {
			const min = checks.find((c) => c.check === "min_length")?.minimum ?? 0;
			const max = checks.find((c) => c.check === "max_length")?.maximum ?? w.maxItems;
			return fc.array(walk(child(def.element), w, depth + 1), {
				minLength: Math.min(min, w.maxItems),
				maxLength: Math.max(Math.min(min, w.maxItems), Math.min(max, w.maxItems)),
			});
		}
		case "tuple":
			return fc.tuple(...(def.items as ZodLike[]).map((item) => walk(item, w, depth + 1)));
		case "record":
			return fc.dictionary(
				walk(child(def.keyType), w, depth + 1).map(String),
				walk(child(def.valueType), w, depth + 1),
				{ maxKeys: w.maxItems },
			);
		case "union":
			return fc.oneof(...(def.options as ZodLike[]).map((option) => walk(option, w, depth + 1)));
		case "intersection":
			return fc
				.tuple(walk(child(def.left), w, depth + 1), walk(child(def.right), w, depth + 1))
				.map(([a, b]) => (isRecord(a) && isRecord(b) ? { ...a, ...b } : a));
		case "optional":
			return fc.option(walk(child(def.innerType), w, depth + 1), { nil: undefined });
		case "nullable":
			return fc.option(walk(child(def.innerType), w, depth + 1), { nil: null });
		case "default":
		case "prefault":
		case "readonly":
		case "catch":
		case "nonoptional":
			return walk(child(def.innerType), w, depth);
		case "pipe":
			return walk(child(def.in), w, depth);
		case "lazy":
			return walk((def.getter as () => ZodLike)(), w, depth + 1);
		default:
			// unknown, any, json values, custom: any JSON.
			return fc.jsonValue({ maxDepth: 3 });
	}
}

function stringFor(def: ZodDef, checks: CheckDef[], w: Walk): Arbitrary<string> {
	const format =
		(def.format as string | undefined) ?? checks.find((c) => c.check === "string_format")?.format;
	const pattern = (def.pattern as RegExp | undefined) ?? checks.find((c) => c.pattern)?.pattern;
	const min = checks.find((c) => c.check === "min_length")?.minimum ?? 0;
	const max = checks.find((c) => c.check === "max_length")?.maximum ?? 64;
	let base: Arbitrary<string>;
	if (pattern) base = fc.stringMatching(pattern);
	else if (format === "url") base = fc.webUrl();
	else if (format === "email") base = fc.emailAddress();
	else if (format === "uuid") base = fc.uuid();
	else base = fc.string({ minLength: min, maxLength: Math.max(min, Math.min(max, 64)), unit: "grapheme" });
	return w.plant ? fc.oneof({ arbitrary: base, weight: 4 }, { arbitrary: w.plant, weight: 1 }) : base;
}

function numberFor(def: ZodDef, checks: CheckDef[]): Arbitrary<number> {
	const integer = def.format === "safeint" || def.format === "int32" || def.format === "uint32";
	let min = integer ? Number.MIN_SAFE_INTEGER : -1e12;
	let max = integer ? Number.MAX_SAFE_INTEGER : 1e12;
	for (const c of checks) {
		if (c.check === "greater_than" && c.value !== undefined) min = c.value + (c.inclusive ? 0 : 1);
		if (c.check === "less_than" && c.value !== undefined) max = c.value - (c.inclusive ? 0 : 1);
	}
	if (min > max) return fc.constant(min);
	return integer ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

function objectFor(shape: Record<string, ZodLike>, w: Walk, depth: number): Arbitrary<unknown> {
	const keys = Object.keys(shape);
	const arbs: Record<string, Arbitrary<unknown>> = {};
	for (const key of keys) arbs[key] = walk(shape[key]!, w, depth + 1);
	const required = keys.filter((key) => (shape[key]!._zod.def as ZodDef).type !== "optional");
	return fc.record(arbs, { requiredKeys: required });
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}
