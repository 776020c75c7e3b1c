// IdentityError: what sign-in, bearer checks and permission checks throw, with stable codes the HTTP layer and the agent endpoint map.

export type IdentityErrorCode =
	/** Missing, malformed or rejected credentials (HTTP 401). */
	| "unauthorized"
	/** GitHub failed, rate-limited us, or could not be reached: retry later (HTTP 503). */
	| "unavailable"
	/** A stored authorization can no longer be renewed: its person must sign in (or pair) again. */
	| "authorization-expired"
	/** A local account's authorization has no GitHub token to give. */
	| "no-github-token";

export class IdentityError extends Error {
	constructor(
		readonly code: IdentityErrorCode,
		message: string,
		readonly hint?: string,
		/** For `unavailable`: how long GitHub asked us to wait, when it said. */
		readonly retryAfterMs?: number,
		options?: { cause?: unknown },
	) {
		super(message, options);
		this.name = "IdentityError";
	}
}

export function isIdentityError(error: unknown, code?: IdentityErrorCode): error is IdentityError {
	return error instanceof IdentityError && (code === undefined || error.code === code);
}

export const unauthorized = (message: string, hint?: string) =>
	new IdentityError("unauthorized", message, hint);

export const authorizationExpired = (login: string) =>
	new IdentityError(
		"authorization-expired",
		`The GitHub authorization of ${login} has expired or was revoked.`,
		`Sign in to Chopin again as ${login}.`,
	);
