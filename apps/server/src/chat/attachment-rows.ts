// A message's files as stored (chat_message_attachments): written with the message, listed on its view without
// their bytes, and read whole for the turn that answers it (a Retry's included) and for the page that shows one.
import { z } from "zod";
import type { Db } from "../store/store";
import type { CheckedAttachment } from "./attachments";
import type { MessageAttachment } from "./message-view";

const infoRow = z.object({
	message_id: z.string(),
	position: z.number().int(),
	name: z.string(),
	kind: z.enum(["image", "file"]),
	media_type: z.string(),
	size: z.number().int(),
});
const fullRow = infoRow.extend({ bytes: z.instanceof(Uint8Array) });

/** A stored file with its bytes. */
export interface StoredAttachment extends CheckedAttachment {
	index: number;
}

export async function insertAttachments(
	db: Db,
	messageId: string,
	files: readonly CheckedAttachment[],
): Promise<void> {
	for (const [position, file] of files.entries()) {
		await db.sql`INSERT INTO chat_message_attachments ${db.sql({
			message_id: messageId,
			position,
			name: file.name,
			kind: file.kind,
			media_type: file.mediaType,
			size: file.bytes.length,
			bytes: file.bytes,
		})}`;
	}
}

/** Per message id, its files as Chat shows them, in the order sent. */
export async function attachmentInfos(
	db: Db,
	messages: readonly { id: string; documentId: string }[],
): Promise<Map<string, MessageAttachment[]>> {
	const byMessage = new Map<string, MessageAttachment[]>();
	if (messages.length === 0) return byMessage;
	const documentOf = new Map(messages.map((m) => [m.id, m.documentId]));
	const rows = await db.many(
		db.sql`SELECT message_id, position, name, kind, media_type, size FROM chat_message_attachments
			WHERE message_id IN ${db.sql([...documentOf.keys()])} ORDER BY message_id, position`,
		infoRow,
	);
	for (const row of rows) {
		const list = byMessage.get(row.message_id) ?? [];
		list.push({
			index: row.position,
			name: row.name,
			kind: row.kind,
			mediaType: row.media_type,
			size: row.size,
			path: attachmentPath(documentOf.get(row.message_id)!, row.message_id, row.position),
		});
		byMessage.set(row.message_id, list);
	}
	return byMessage;
}

export function attachmentPath(documentId: string, messageId: string, index: number): string {
	return `/api/documents/${encodeURIComponent(documentId)}/messages/${encodeURIComponent(messageId)}/attachments/${index}`;
}

/** A message's files with their bytes, in the order sent (none for a message without files). */
export async function readAttachments(db: Db, messageId: string): Promise<StoredAttachment[]> {
	const rows = await db.many(
		db.sql`SELECT * FROM chat_message_attachments WHERE message_id = ${messageId} ORDER BY position`,
		fullRow,
	);
	return rows.map(toStored);
}

export async function readAttachment(
	db: Db,
	messageId: string,
	index: number,
): Promise<StoredAttachment | undefined> {
	const row = await db.one(
		db.sql`SELECT * FROM chat_message_attachments WHERE message_id = ${messageId} AND position = ${index}`,
		fullRow,
	);
	return row && toStored(row);
}

function toStored(row: z.infer<typeof fullRow>): StoredAttachment {
	return { index: row.position, name: row.name, kind: row.kind, mediaType: row.media_type, bytes: row.bytes };
}
