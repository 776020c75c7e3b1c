// The example's own errors (a stable code, one sentence, a hint) and how any failure becomes the one
// line it prints on stderr before exiting non-zero. Never holds a token.
import { LinkError, Refused, UpgradeRefused } from "@chopin/agent-link/client";

export const ECHO_ERROR_CODES = ["env-invalid", "credential-gone"] as const;
export type EchoErrorCode = (typeof ECHO_ERROR_CODES)[number];

export class EchoError extends Error {
	override readonly name = "EchoError";
	constructor(
		readonly code: EchoErrorCode,
		message: string,
		readonly hint: string,
	) {
		super(message);
	}
}

/** Exit statuses: 0 stopped by a signal or detached, 1 ended for good, 2 started wrongly. */
export const EXIT = { ok: 0, ended: 1, usage: 2 } as const;

/** One line for stderr and the exit status, for whatever ended the backend. */
export function describeFailure(error: unknown): { line: string; exit: number } {
	if (error instanceof EchoError) {
		return {
			line: `${error.code}: ${error.message} ${error.hint}`,
			exit: error.code === "env-invalid" ? EXIT.usage : EXIT.ended,
		};
	}
	if (error instanceof Refused) return { line: `refused ${error.code}: ${error.message}`, exit: EXIT.ended };
	if (error instanceof UpgradeRefused) {
		return { line: `upgrade-refused ${error.status}: ${error.message} ${error.hint}`, exit: EXIT.ended };
	}
	if (error instanceof LinkError) {
		const hint = error.hint ? ` ${error.hint}` : "";
		const exit = error.code === "invalid-options" || error.code === "insecure-url" ? EXIT.usage : EXIT.ended;
		return { line: `${error.code}: ${error.message}${hint}`, exit };
	}
	const message = error instanceof Error ? error.message : String(error);
	return { line: `unexpected: ${message}`, exit: EXIT.ended };
}
