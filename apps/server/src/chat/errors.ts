// Chat's refusals: a stable code, one sentence, a hint, and the HTTP status a route answers with.
import { DomainError } from "../domain-error";

export type ChatErrorCode =
	| "document-not-found"
	| "document-archived"
	| "invalid-login"
	| "message-empty"
	| "message-too-long"
	| "message-not-found"
	| "message-not-streaming"
	| "message-not-retryable"
	| "retry-forbidden"
	| "tool-call-repeated"
	| "invalid-page"
	| "too-many-attachments"
	| "attachment-too-large"
	| "attachments-too-large"
	| "attachment-name-invalid"
	| "attachment-data-invalid"
	| "attachment-unreadable"
	| "attachment-unsupported"
	| "attachment-not-found"
	| "attachments-not-taken"
	| "thread-root-invalid"
	| "command-in-thread";

export class ChatError extends DomainError {
	override readonly name = "ChatError";
	constructor(
		override readonly code: ChatErrorCode,
		message: string,
		hint?: string,
		status = 400,
	) {
		super(code, message, hint, status);
	}
}
