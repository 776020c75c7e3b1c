// Whether a document can be read or changed, for services that hang rows off it (Chat, Decisions, images).
import type { Db } from "../store/store";

export interface DocumentState {
	archived: boolean;
	deleted: boolean;
}

/**
 * The document's archived and deleted flags, or undefined when there is no such document. With
 * lock (inside a transaction), PostgreSQL also locks the row until the transaction ends, so writers
 * that number rows per document (Chat's seq, the order of Decisions) take turns; SQLite's
 * transactions already take the database's write lock first.
 */
export async function readDocumentState(
	db: Db,
	documentId: string,
	options: { lock?: boolean } = {},
): Promise<DocumentState | undefined> {
	const row =
		options.lock && db.kind === "postgres"
			? await db.one(
					db.sql`SELECT archived, deleted FROM documents WHERE id = ${documentId} FOR NO KEY UPDATE`,
				)
			: await db.one(db.sql`SELECT archived, deleted FROM documents WHERE id = ${documentId}`);
	return row && { archived: row.archived === 1, deleted: row.deleted === 1 };
}
