// Errors the GitHub emulator raises to a test or an operator: a stable code, one sentence, a hint.

export type EmulatorErrorCode =
	| "fixture-unreadable"
	| "fixture-invalid"
	| "unknown-user"
	| "unknown-repository"
	| "unknown-token"
	| "duplicate-user"
	| "invalid-control-request"
	| "unknown-control-endpoint"
	| "unexpected-calls";

export class EmulatorError extends Error {
	override readonly name = "EmulatorError";

	constructor(
		readonly code: EmulatorErrorCode,
		message: string,
		readonly hint?: string,
		/** Every problem found, one per line, when there were several (a fixture's fields). */
		readonly details: readonly string[] = [],
	) {
		super(message);
	}

	/** The body the control API answers with, the same shape the Chopin server uses for its errors. */
	toJSON(): { code: EmulatorErrorCode; message: string; hint?: string } {
		return this.hint
			? { code: this.code, message: this.message, hint: this.hint }
			: { code: this.code, message: this.message };
	}
}
