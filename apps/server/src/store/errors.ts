// Store errors with stable codes, and the one place that recognises each database's unique-violation error.
import { SQL } from "bun";

export type StoreErrorCode =
	| "store-unreachable"
	| "store-url-invalid"
	| "store-in-use"
	| "store-closed"
	| "store-too-new"
	| "integer-out-of-range"
	| "too-many-rows"
	| "outside-transaction"
	| "row-invalid";

export class StoreError extends Error {
	constructor(
		readonly code: StoreErrorCode,
		message: string,
		readonly hint?: string,
		options?: { cause?: unknown },
	) {
		super(message, options);
		this.name = "StoreError";
	}
}

/** True when err is a UNIQUE or PRIMARY KEY violation, on SQLite or PostgreSQL. */
export function isUniqueViolation(err: unknown): boolean {
	if (err instanceof SQL.SQLiteError) {
		return err.code === "SQLITE_CONSTRAINT_UNIQUE" || err.code === "SQLITE_CONSTRAINT_PRIMARYKEY";
	}
	if (err instanceof SQL.PostgresError) return err.errno === "23505";
	return false;
}
