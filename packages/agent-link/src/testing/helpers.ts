/** Small helpers the schema tests share: deep copies with one change, and every nested object's path. */
import { FEATURES } from "../features";

export const ALL_FEATURES = FEATURES;

type Path = (string | number)[];

/** The paths of every plain object inside value (value itself included), skipping fields named in skip. */
export function objectPaths(value: unknown, skip: readonly string[] = [], path: Path = []): Path[] {
	if (Array.isArray(value)) return value.flatMap((item, i) => objectPaths(item, skip, [...path, i]));
	if (typeof value !== "object" || value === null) return [];
	const out: Path[] = [path];
	for (const [key, child] of Object.entries(value)) {
		if (!skip.includes(key)) out.push(...objectPaths(child, skip, [...path, key]));
	}
	return out;
}

/** A deep copy of value with the field at path set (or removed when to is undefined). */
export function withField(value: unknown, path: Path, to: unknown): Record<string, unknown> {
	const copy = structuredClone(value) as Record<string, unknown>;
	let target: Record<string | number, unknown> = copy;
	for (const key of path.slice(0, -1)) target = target[key] as Record<string | number, unknown>;
	const last = path[path.length - 1] as string | number;
	if (to === undefined) delete target[last];
	else target[last] = to;
	return copy;
}

/** A deep copy of value with an unknown field added to the object at path. */
export function withExtraField(value: unknown, path: Path): Record<string, unknown> {
	return withField(value, [...path, "unlisted"], 1);
}

/** A string of n code points made of one character. */
export function repeat(n: number, char = "a"): string {
	return char.repeat(n);
}
