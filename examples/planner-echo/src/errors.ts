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

/** Exit statuses: 0 stopped by a signal, 1 ended for good, 2 started wrongly. */
export const EXIT = { ok: 0, ended: 1, usage: 2 } as const;

/**
 * Hints in this backend's terms where the client's own would mislead: its options are environment
 * variables, and "bearer token" would read as a credential to the redactor.
 */
const HINTS: Partial<Record<string, string>> = {
	"insecure-url": "Set CHOPIN_URL to the server's https: origin; http: is only for a loopback server.",
	"upgrade-401":
		"The credential was refused; with CHOPIN_PLANNER_TOKEN_FILE the file is read again before the next attempt.",
};

const sentence = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`);
const line = (code: string, message: string, hint?: string) =>
	`${code}: ${sentence(message)}${hint ? ` ${hint}` : ""}`;

/** One line for stderr and the exit status, for whatever ended the backend. */
export function describeFailure(error: unknown): { line: string; exit: number } {
	if (error instanceof EchoError) {
		return {
			line: line(error.code, error.message, error.hint),
			exit: error.code === "env-invalid" ? EXIT.usage : EXIT.ended,
		};
	}
	if (error instanceof Refused)
		return { line: line(`refused ${error.code}`, error.message), exit: EXIT.ended };
	if (error instanceof UpgradeRefused) {
		const hint = HINTS[`upgrade-${error.status}`] ?? error.hint;
		return { line: line(`upgrade-refused ${error.status}`, error.message, hint), exit: EXIT.ended };
	}
	if (error instanceof LinkError) {
		const exit = error.code === "invalid-options" || error.code === "insecure-url" ? EXIT.usage : EXIT.ended;
		return { line: line(error.code, error.message, HINTS[error.code] ?? error.hint), exit };
	}
	const message = error instanceof Error ? error.message : String(error);
	return { line: line("unexpected", message), exit: EXIT.ended };
}
