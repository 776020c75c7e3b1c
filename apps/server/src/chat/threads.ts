// Threads (docs/chat.md, Threads): a conversation hanging off one top-level message of the Chat. One level deep:
// a thread's root is a person's message or a Planner reply of the main Chat, never a notice or a thread's message.
import type { DomainDeps } from "../domain-deps";
import type { Db } from "../store/store";
import { ChatError } from "./errors";
import { findMessageRow, type MessageRow, messageViews } from "./message-rows";

/** The root a new message of a thread names, checked: in this document, top-level, not a notice. */
export async function threadRootRow(db: Db, documentId: string, rootId: string): Promise<MessageRow> {
	const row = await findMessageRow(db, rootId);
	if (!row || row.document_id !== documentId) {
		throw new ChatError(
			"thread-root-invalid",
			`No message ${rootId} exists in this document to start a thread on.`,
			"Open the thread from a message of this document's Chat.",
			404,
		);
	}
	if (row.thread_root !== null || row.role === "system") {
		throw new ChatError(
			"thread-root-invalid",
			row.role === "system"
				? "A notice from Chopin cannot have a thread."
				: "Threads are one level deep: this message is already in a thread.",
			"Reply in the thread it belongs to, or start one on a message of the main Chat.",
			409,
		);
	}
	return row;
}

/** A thread's root as it is now, published again so the page's reply count follows its thread. */
export async function publishThreadRoot(deps: DomainDeps, rootId: string): Promise<void> {
	const row = await findMessageRow(deps.store, rootId);
	if (!row) return;
	const [message] = await messageViews(deps.store, [row]);
	deps.hub.publish(row.document_id, {
		type: "message.updated",
		documentId: row.document_id,
		message: message!,
	});
}
