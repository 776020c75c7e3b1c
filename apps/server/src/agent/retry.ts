// Retry on a failed reply (spec: Retrying a failed turn): only the person who sent the message may press it; the
// failed attempt leaves Chat for everyone, and the same message's turn runs again (message and retry: true go
// on the turn only with retry-turn). Retry is not a new message: nothing is posted.
import { ChatError } from "../chat/errors";
import type { MessageView } from "../chat/message-view";
import { messageTurn, runChatTurn } from "./chat-turns";
import { forgetForkPoint } from "./fork-points";
import { type Refusal, type ReserveDeps, reservePlanner } from "./reserve";
import { wording } from "./wording";

export interface RetryInput {
	documentId: string;
	/** The failed reply the person pressed Retry on. */
	replyId: string;
	/** Who pressed it. */
	by: string;
}

/** Sent: the message whose turn runs again. Refused: as an @chopin message would be (no Planner, busy). */
export type RetryResult = { status: "sent"; message: MessageView } | Refusal;

/**
 * Checks the reply and who asks (a ChatError says what is wrong), reserves the Planner as an @chopin message
 * does, and only then takes the failed attempt out: a refused Retry changes nothing.
 */
export async function retryReply(r: ReserveDeps, input: RetryInput): Promise<RetryResult> {
	const { chat, documents } = r.deps.domain;
	const message = await retriable(r, input);
	if ((await documents.get(input.documentId)).archived) {
		throw new ChatError("document-archived", wording.retryArchived(), "Unarchive it first.", 409);
	}
	const reserved = await reservePlanner(r, input.documentId, input.by);
	if (!reserved.ok) return reserved.refusal;
	const { planner } = reserved;
	let thread: MessageView | undefined;
	try {
		// Checked again now that the Planner is ours: a second press meanwhile has already taken it out.
		await retriable(r, input);
		if (message.threadRoot) thread = await chat.threadRoot(input.documentId, message.threadRoot);
		// A thread forked later from this message branches from the retried turn, never the failed one.
		await forgetForkPoint(r.deps.store, message.id);
		await chat.replies.remove(input.replyId);
	} catch (error) {
		planner.idle();
		throw error;
	}
	void runChatTurn(planner, messageTurn(message, { retry: true, thread }));
	return { status: "sent", message };
}

/** The person's message a failed reply answers, when `by` sent it; otherwise the ChatError to answer with. */
async function retriable(r: ReserveDeps, input: RetryInput): Promise<MessageView> {
	const { chat } = r.deps.domain;
	const notFound = () =>
		new ChatError(
			"message-not-found",
			`No message ${input.replyId} exists in this document.`,
			undefined,
			404,
		);
	const reply = await chat.get(input.replyId).catch((error: unknown) => {
		throw error instanceof ChatError ? notFound() : error;
	});
	if (reply.documentId !== input.documentId) throw notFound();
	if (reply.role !== "planner" || reply.status !== "failed" || !reply.replyTo) {
		throw new ChatError("message-not-retryable", wording.retryNotFailed(), undefined, 409);
	}
	const message = await chat.get(reply.replyTo);
	if (message.role !== "person" || !message.authorLogin) {
		throw new ChatError("message-not-retryable", wording.retryNotPerson(), undefined, 409);
	}
	if (message.authorLogin.toLowerCase() !== input.by.toLowerCase()) {
		throw new ChatError("retry-forbidden", wording.retryForbidden(message.authorLogin), undefined, 403);
	}
	return message;
}
