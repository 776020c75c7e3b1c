// The CliError a call ends with, for tests that check its code, message and hint; anything else is rethrown.
import { CliError } from "../program/errors";

/** The CliError fn throws; fails when it throws something else or nothing. */
export function refusal(fn: () => unknown): CliError {
	try {
		fn();
	} catch (error) {
		return asCliError(error);
	}
	throw new Error("expected a CliError");
}

/** The CliError the promise rejects with; fails when it rejects with something else or resolves. */
export async function asyncRefusal(promise: Promise<unknown>): Promise<CliError> {
	try {
		await promise;
	} catch (error) {
		return asCliError(error);
	}
	throw new Error("expected a CliError");
}

function asCliError(error: unknown): CliError {
	if (error instanceof CliError) return error;
	throw error;
}
