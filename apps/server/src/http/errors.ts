// HttpError and the JSON error body every failed request gets: { code, message, hint? }.
import { redactTokens } from "@chopin/agent-link/redact";
import { jsonResponse } from "./responses";

/** A refusal with a stable code (listed in docs/errors.md), one sentence, and maybe a hint. */
export class HttpError extends Error {
	constructor(
		readonly status: number,
		readonly code: string,
		message: string,
		readonly hint?: string,
		/** Extra fields for the body, e.g. `{ field: "title" }`. */
		readonly details?: Record<string, unknown>,
		/** Extra headers, e.g. `Allow` on a 405. */
		readonly headers?: Record<string, string>,
	) {
		super(message);
		this.name = "HttpError";
	}

	/** Token shapes are masked: a message may quote what the request put in a path or field. */
	toResponse(): Response {
		const details = Object.fromEntries(
			Object.entries(this.details ?? {}).map(([k, v]) => [k, typeof v === "string" ? redactTokens(v) : v]),
		);
		const body = {
			code: this.code,
			message: redactTokens(this.message),
			...(this.hint && { hint: redactTokens(this.hint) }),
			...details,
		};
		return jsonResponse(body, { status: this.status, headers: this.headers });
	}
}

export const notFound = (message = "There is nothing here.") => new HttpError(404, "not-found", message);
