// The error every domain service throws: a stable code, one sentence, a hint, and the HTTP status a route answers with.

/** A refusal a route turns into `{ code, message, hint? }` with `status`; codes are listed in docs/errors.md. */
export class DomainError extends Error {
	constructor(
		readonly code: string,
		message: string,
		readonly hint?: string,
		/** The HTTP status a route answers with: 400 bad input, 404 nothing there, 409 a state conflict. */
		readonly status = 400,
		/** Extra fields for the error body, e.g. `{ revision: 7 }`. */
		readonly details?: Record<string, unknown>,
	) {
		super(message);
		this.name = "DomainError";
	}
}
