// Chat messages and their Work details rows as stored, read back into the views the service returns.
import { z } from "zod";
import { readDocumentState } from "../documents/document-state";
import { dbJson } from "../store/codecs";
import { isUniqueViolation } from "../store/errors";
import type { Db, Store } from "../store/store";
import { attachmentInfos, insertAttachments } from "./attachment-rows";
import type { CheckedAttachment } from "./attachments";
import { ChatError } from "./errors";
import {
	chatImageSchema,
	MESSAGE_ROLES,
	MESSAGE_STATUSES,
	type MessageView,
	TOOL_ROW_STATUSES,
	type ToolRow,
} from "./message-view";
import { refusedImageSchema } from "./tool-results";

export const messageRow = z.object({
	id: z.string(),
	document_id: z.string(),
	seq: z.number().int(),
	author_login: z.string().nullable(),
	role: z.enum(MESSAGE_ROLES),
	body: z.string(),
	status: z.enum(MESSAGE_STATUSES),
	reply_to: z.string().nullable(),
	thread_root: z.string().nullable(),
	error: z.string().nullable(),
	images: dbJson(z.array(chatImageSchema)),
	refused_images: dbJson(z.array(refusedImageSchema)),
	created_at: z.number().int(),
	updated_at: z.number().int(),
});
export type MessageRow = z.infer<typeof messageRow>;

const toolCallRow = z.object({
	message_id: z.string(),
	tool_call_id: z.string(),
	position: z.number().int(),
	name: z.string(),
	input: z.string(),
	status: z.enum(TOOL_ROW_STATUSES),
	result: z.string().nullable(),
	error_label: z.string().nullable(),
	error_message: z.string().nullable(),
	image_count: z.number().int(),
	started_at: z.number().int(),
	ended_at: z.number().int().nullable(),
});
type ToolCallRow = z.infer<typeof toolCallRow>;

function toToolRow(row: ToolCallRow): ToolRow {
	return {
		toolCallId: row.tool_call_id,
		name: row.name,
		input: row.input,
		status: row.status,
		...(row.result !== null && { result: row.result }),
		...(row.error_label !== null && { error: { label: row.error_label, message: row.error_message ?? "" } }),
		imageCount: row.image_count,
		startedAt: row.started_at,
		...(row.ended_at !== null && { endedAt: row.ended_at }),
	};
}

export function toMessageView(
	row: MessageRow,
	tools: ToolRow[] = [],
	attachments: MessageView["attachments"] = [],
	threadReplies = 0,
): MessageView {
	return {
		id: row.id,
		documentId: row.document_id,
		seq: row.seq,
		role: row.role,
		authorLogin: row.author_login,
		body: row.body,
		status: row.status,
		...(row.error !== null && { error: row.error }),
		replyTo: row.reply_to,
		...(row.thread_root !== null && { threadRoot: row.thread_root }),
		...(threadReplies > 0 && { threadReplies }),
		tools,
		images: row.images,
		...(attachments.length > 0 && { attachments }),
		...(row.refused_images.length > 0 && { refusedImages: row.refused_images }),
		createdAt: row.created_at,
		updatedAt: row.updated_at,
	};
}

/**
 * The view of a row just inserted without files: it has no Work details rows and no thread yet, so nothing more
 * is read for it (the @chopin path writes two such rows before its turn).
 */
export function newMessageView(row: MessageRow): MessageView {
	return toMessageView(row);
}

/** The views of these rows, each with its Work details rows, in the rows' order. */
export async function messageViews(db: Db, rows: readonly MessageRow[]): Promise<MessageView[]> {
	const planner = rows.filter((r) => r.role === "planner").map((r) => r.id);
	const byMessage = new Map<string, ToolRow[]>();
	if (planner.length) {
		const tools = await db.many(
			db.sql`SELECT * FROM chat_tool_calls WHERE message_id IN ${db.sql(planner)} ORDER BY message_id, position`,
			toolCallRow,
		);
		for (const tool of tools) {
			const list = byMessage.get(tool.message_id) ?? [];
			list.push(toToolRow(tool));
			byMessage.set(tool.message_id, list);
		}
	}
	const people = rows
		.filter((r) => r.role === "person")
		.map((r) => ({ id: r.id, documentId: r.document_id }));
	const files = await attachmentInfos(db, people);
	const threads = await threadCounts(
		db,
		rows.filter((r) => r.thread_root === null).map((r) => r.id),
	);
	return rows.map((row) =>
		toMessageView(row, byMessage.get(row.id) ?? [], files.get(row.id), threads.get(row.id)),
	);
}

/** How many messages each of these top-level messages' threads holds (absent: none). */
async function threadCounts(db: Db, roots: readonly string[]): Promise<Map<string, number>> {
	const counts = new Map<string, number>();
	if (roots.length === 0) return counts;
	const rows = await db.many(
		db.sql`SELECT thread_root, count(*) AS n FROM chat_messages WHERE thread_root IN ${db.sql(roots)}
			GROUP BY thread_root`,
	);
	for (const row of rows) counts.set(String(row.thread_root), Number(row.n));
	return counts;
}

export async function findMessageRow(db: Db, id: string): Promise<MessageRow | undefined> {
	return db.one(db.sql`SELECT * FROM chat_messages WHERE id = ${id}`, messageRow);
}

export interface NewMessage {
	id: string;
	documentId: string;
	role: MessageRow["role"];
	authorLogin: string | null;
	body: string;
	status: MessageRow["status"];
	replyTo: string | null;
	/** The thread's root when the message is in a thread. */
	threadRoot?: string | null;
	now: number;
	/** A person's files, written in the same transaction as the message. */
	attachments?: readonly CheckedAttachment[];
	/** false: committed without waiting for the disk (store.ts, durable); the caller syncs before it acknowledges. */
	durable?: boolean;
}

/**
 * Inserts a message at the document's next seq. Inserts into one document take turns (the document's
 * row is locked first); should two still race for a seq, UNIQUE (document_id, seq) refuses one, which
 * tries again.
 */
export async function insertMessage(store: Store, message: NewMessage): Promise<MessageRow> {
	if (store.kind === "postgres" && !message.attachments?.length) {
		const row = await insertInOneStatement(store, message).catch((error: unknown) => {
			if (isUniqueViolation(error)) return undefined;
			throw error;
		});
		if (row) return row;
		// No row: the document refuses it (said by checkDocument), or it changed meanwhile. A seq raced for: the
		// transaction below, which locks the document before it reads the seq.
		await checkDocument(store, message.documentId, { allowArchived: message.role === "system" });
	}
	for (let attempt = 1; ; attempt++) {
		try {
			return await store.transaction(
				async (tx) => {
					await checkDocument(tx, message.documentId, {
						allowArchived: message.role === "system",
						lock: true,
					});
					// The next seq is read in the insert itself, and RETURNING gives the row as stored: one round trip.
					const row = await tx.one(
						tx.sql`INSERT INTO chat_messages (id, document_id, seq, author_login, role, body, status, reply_to,
							thread_root, created_at, updated_at)
						VALUES (${message.id}, ${message.documentId},
							(SELECT coalesce(max(seq), 0) + 1 FROM chat_messages WHERE document_id = ${message.documentId}),
							${message.authorLogin}, ${message.role}, ${message.body}, ${message.status}, ${message.replyTo},
							${message.threadRoot ?? null}, ${message.now}, ${message.now})
						RETURNING *`,
						messageRow,
					);
					if (message.attachments?.length) await insertAttachments(tx, message.id, message.attachments);
					return row!;
				},
				{ durable: message.durable ?? true },
			);
		} catch (error) {
			if (attempt < 5 && isUniqueViolation(error)) continue;
			throw error;
		}
	}
}

/**
 * PostgreSQL, a message without files: the transaction's five round trips (BEGIN, SET LOCAL, the document's lock, the
 * insert, COMMIT) as one autocommitted statement, on the path of every @chopin turn (docs/performance.md). It locks
 * the document's row as checkDocument does and inserts only when the document takes messages (no row otherwise);
 * set_config(..., true) sets synchronous_commit for this statement's own transaction, which is read at its commit.
 * The seq is read when the statement starts: one that waited for the lock may collide, and the caller then takes the
 * transaction.
 */
async function insertInOneStatement(store: Store, message: NewMessage): Promise<MessageRow | undefined> {
	const commit = message.durable === false ? "off" : "on";
	const archivedToo = message.role === "system" ? 1 : 0;
	return store.one(
		store.sql`WITH commit_mode AS (SELECT set_config('synchronous_commit', ${commit}, true) AS mode)
			INSERT INTO chat_messages (id, document_id, seq, author_login, role, body, status, reply_to, thread_root,
				created_at, updated_at)
			SELECT ${message.id}, ${message.documentId},
				(SELECT coalesce(max(seq), 0) + 1 FROM chat_messages WHERE document_id = ${message.documentId}),
				${message.authorLogin}, ${message.role}, ${message.body}, ${message.status}, ${message.replyTo},
				${message.threadRoot ?? null}, ${message.now}, ${message.now}
			FROM documents CROSS JOIN commit_mode
			WHERE documents.id = ${message.documentId} AND documents.deleted = 0
				AND (documents.archived = 0 OR ${archivedToo} = 1)
			FOR NO KEY UPDATE OF documents
			RETURNING *`,
		messageRow,
	);
}

/** Refuses a missing or deleted document, and an archived one unless allowed; with lock, see readDocumentState. */
export async function checkDocument(
	db: Db,
	documentId: string,
	options: { allowArchived?: boolean; lock?: boolean } = {},
): Promise<void> {
	const state = await readDocumentState(db, documentId, options);
	if (!state || state.deleted) {
		throw new ChatError(
			"document-not-found",
			`No document ${documentId} exists, or it was deleted.`,
			undefined,
			404,
		);
	}
	if (state.archived && !options.allowArchived) {
		throw new ChatError(
			"document-archived",
			`Document ${documentId} is archived, so its Chat takes no new messages.`,
			"Unarchive it first.",
			409,
		);
	}
}
