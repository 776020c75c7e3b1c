// The one place where SQLite's and PostgreSQL's answers are made alike, in both directions.
import { StoreError } from "./errors";

/** PostgreSQL type OIDs that Bun returns differently from SQLite. */
const PG_INT8 = 20;
const PG_NUMERIC = 1700;
const PG_BOOL = 16;
const PG_BYTEA = 17;

interface Column {
	name: string;
	type: number;
}

/**
 * Rewrites a PostgreSQL result in place so it reads as SQLite's would: int8 and numeric (which
 * Bun returns as strings, count(*) included) become numbers, booleans become 1/0 (what the
 * INTEGER columns of both hold), and bytea Buffers become plain Uint8Arrays. SQLite results
 * need nothing: their columns carry no types (`columns` is null) and already look like this.
 */
export function normaliseRows(rows: unknown): void {
	const columns = (rows as { columns?: Column[] | null }).columns;
	if (!Array.isArray(rows) || !columns?.length) return;
	const convert = columns.map((c) => converter(c.type));
	if (convert.every((f) => f === undefined)) return;
	for (const row of rows) {
		if (Array.isArray(row)) {
			// `.values()` rows are arrays in column order.
			convert.forEach((f, i) => {
				if (f && row[i] !== null) row[i] = f(row[i], columns[i]!.name);
			});
		} else if (row && typeof row === "object") {
			const record = row as Record<string, unknown>;
			convert.forEach((f, i) => {
				const name = columns[i]!.name;
				if (f && record[name] !== null && record[name] !== undefined) record[name] = f(record[name], name);
			});
		}
	}
}

function converter(type: number): ((value: unknown, column: string) => unknown) | undefined {
	switch (type) {
		case PG_INT8:
		case PG_NUMERIC:
			return toNumber;
		case PG_BOOL:
			return (value) => (value === true ? 1 : value === false ? 0 : value);
		case PG_BYTEA:
			return (value) =>
				value instanceof Uint8Array && value.constructor !== Uint8Array
					? new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
					: value;
		default:
			return undefined;
	}
}

function toNumber(value: unknown, column: string): unknown {
	if (typeof value !== "string" && typeof value !== "bigint") return value;
	const n = Number(value);
	// Timestamps and counts are far below 2^53; a larger integer would silently lose digits.
	if (!Number.isFinite(n) || (Number.isInteger(n) && !Number.isSafeInteger(n))) {
		throw new StoreError(
			"integer-out-of-range",
			`Column ${column} holds ${String(value)}, beyond what a number holds exactly.`,
		);
	}
	return n;
}

/**
 * Parameters as both databases accept them: booleans become 1/0 (PostgreSQL refuses a boolean
 * for an INTEGER column) and Dates become milliseconds since the epoch (timestamps are BIGINT).
 * Applies to template values and to the objects and arrays given to `sql(...)` helpers.
 */
export function normaliseParam(value: unknown): unknown {
	if (typeof value === "boolean") return value ? 1 : 0;
	if (value instanceof Date) return value.getTime();
	return value;
}

/** normaliseParam over the argument of a `sql(object)`, `sql([objects], ...)` or `sql([values])` helper call. */
export function normaliseHelperArg(arg: unknown): unknown {
	if (Array.isArray(arg))
		return arg.map((item) => (isPlainObject(item) ? mapObject(item) : normaliseParam(item)));
	if (isPlainObject(arg)) return mapObject(arg);
	return arg;
}

function mapObject(obj: Record<string, unknown>): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const [k, v] of Object.entries(obj)) out[k] = normaliseParam(v);
	return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
	if (value === null || typeof value !== "object") return false;
	const proto = Object.getPrototypeOf(value);
	return proto === Object.prototype || proto === null;
}
