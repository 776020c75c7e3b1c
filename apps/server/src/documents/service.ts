// Documents in the store: create, read, list, revise (whole source or block edits), rename, archive and delete.
import { codePointLength, utf8ByteLength } from "@chopin/agent-link";
import { z } from "zod";
import type { DomainDeps } from "../domain-deps";
import { randomId } from "../ids";
import { dbBoolean } from "../store/codecs";
import { isUniqueViolation } from "../store/errors";
import type { Db } from "../store/store";
import { DocumentError, splitBlocks } from "./blocks";
import type { DocumentChange, DocumentSummary, DocumentView } from "./document-view";
import { applyEdits, type BlockSummary, parseEditPlanInput } from "./edit";

/** The largest source a document may hold, in UTF-8 bytes (1 MiB); read_plan pages through it. */
export const MAX_SOURCE_BYTES = 1024 * 1024;
/** A title is one line of at most this many characters. */
export const MAX_TITLE_CHARS = 200;

/** GitHub's rules: an owner of up to 39 letters, digits and single hyphens; a name of up to 100 of A-Z a-z 0-9 . _ - */
const REPOSITORY_PATTERN = /^([A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38})\/([A-Za-z0-9._-]{1,100})$/;

const documentRow = z.object({
	id: z.string(),
	repository: z.string(),
	title: z.string(),
	revision: z.number().int(),
	archived: dbBoolean,
	deleted: dbBoolean,
	created_by: z.string(),
	created_at: z.number().int(),
	updated_at: z.number().int(),
});
const documentRowWithSource = documentRow.extend({ source: z.string() });
type DocumentRow = z.infer<typeof documentRow>;
type DocumentRowWithSource = z.infer<typeof documentRowWithSource>;

function toSummary(row: DocumentRow): DocumentSummary {
	return {
		id: row.id,
		repository: row.repository,
		title: row.title,
		revision: row.revision,
		archived: row.archived,
		deleted: row.deleted,
		createdBy: row.created_by,
		createdAt: row.created_at,
		updatedAt: row.updated_at,
	};
}

function toView(row: DocumentRowWithSource): DocumentView {
	const blocks = splitBlocks(row.source).map(({ text: _text, ...block }) => block);
	return { ...toSummary(row), source: row.source, blocks };
}

export interface CreateDocumentInput {
	/** owner/name; the repositories row is made on its first document. */
	repository: string;
	title: string;
	source?: string;
	createdBy: string;
}

export interface BlockEditsResult {
	document: DocumentView;
	/** New blocks whose text is new, removed old blocks, and runs of untouched blocks (see edit.ts). */
	changed: BlockSummary[];
	removed: { index: number; digest: string }[];
	kept: { from: number; to: number; count: number }[];
}

/** A person's change: who made it, sent with document.updated. */
export interface ChangeOptions {
	by?: string;
}

const notFound = (id: string) =>
	new DocumentError("document-not-found", `No document ${id} exists, or it was deleted.`, undefined, 404);

const archived = (id: string) =>
	new DocumentError(
		"document-archived",
		`Document ${id} is archived, so it cannot be changed.`,
		"Unarchive it first.",
		409,
	);

export class DocumentService {
	constructor(private readonly deps: DomainDeps) {}

	async create(input: CreateDocumentInput): Promise<DocumentView> {
		const repository = checkRepository(input.repository);
		const title = checkTitle(input.title);
		const source = checkSource(input.source ?? "");
		const now = this.deps.clock.now();
		for (let attempt = 1; ; attempt++) {
			const id = randomId();
			try {
				const row = await this.deps.store.transaction(async (tx) => {
					const spelled = await upsertRepository(tx, repository, now);
					await tx.sql`INSERT INTO documents ${tx.sql({
						id,
						repository: spelled,
						title,
						source,
						revision: 0,
						archived: 0,
						deleted: 0,
						created_by: input.createdBy,
						created_at: now,
						updated_at: now,
					})}`;
					return (await tx.one(tx.sql`SELECT * FROM documents WHERE id = ${id}`, documentRowWithSource))!;
				});
				this.#publish(row, "created", { by: input.createdBy });
				return toView(row);
			} catch (error) {
				// 60 random bits: a collision is all but impossible, but costs only a retry.
				if (attempt < 3 && isUniqueViolation(error)) continue;
				throw error;
			}
		}
	}

	/** The document with its source and blocks; a deleted one is not found unless includeDeleted. */
	async get(id: string, options: { includeDeleted?: boolean } = {}): Promise<DocumentView> {
		const row = await this.#row(this.deps.store, id);
		if (!row || (row.deleted && !options.includeDeleted)) throw notFound(id);
		return toView(row);
	}

	/**
	 * The document with its source but without blocks, for readers that split it themselves (the
	 * read view keeps the last source's lines and blocks): splitting a large source costs more than
	 * reading it. A deleted one is not found.
	 */
	async read(id: string): Promise<DocumentSummary & { source: string }> {
		const row = await this.#row(this.deps.store, id);
		if (!row || row.deleted) throw notFound(id);
		return { ...toSummary(row), source: row.source };
	}

	/** The summary (no source) of a document, or undefined when there is none or it was deleted. */
	async find(id: string): Promise<DocumentSummary | undefined> {
		const row = await this.deps.store.one(
			this.deps.store
				.sql`SELECT id, repository, title, revision, archived, deleted, created_by, created_at, updated_at
				FROM documents WHERE id = ${id} AND deleted = 0`,
			documentRow,
		);
		return row && toSummary(row);
	}

	/** A repository's documents, most recently updated first; deleted ones never, archived ones flagged. */
	async listByRepository(repository: string): Promise<DocumentSummary[]> {
		const { store } = this.deps;
		// Names are case-insensitive: find the spelling stored, then use the (repository, updated_at) index.
		const repo = await store.one(
			store.sql`SELECT full_name FROM repositories WHERE lower(full_name) = ${repository.toLowerCase()}`,
		);
		if (!repo) return [];
		const rows = await store.many(
			store.sql`SELECT id, repository, title, revision, archived, deleted, created_by, created_at, updated_at
				FROM documents WHERE repository = ${String(repo.full_name)} AND deleted = 0
				ORDER BY updated_at DESC, id`,
			documentRow,
		);
		return rows.map(toSummary);
	}

	/** Repositories that hold at least one document that is not deleted, as first spelled, by name. */
	async listRepositories(): Promise<string[]> {
		const { store } = this.deps;
		const rows = await store.many(
			store.sql`SELECT DISTINCT repository FROM documents WHERE deleted = 0 ORDER BY repository`,
		);
		return rows.map((r) => String(r.repository));
	}

	/** Replaces the source when the document is still at expectedRevision; else revision-conflict (409). */
	async updateSource(
		id: string,
		update: { source: string; expectedRevision: number },
		options: ChangeOptions = {},
	): Promise<DocumentView> {
		const source = checkSource(update.source);
		const row = await this.#writeSource(id, source, update.expectedRevision);
		if (!row) throw await this.#whyNotWritten(id, update.expectedRevision);
		this.#publish(row, "source", options);
		return toView(row);
	}

	/**
	 * Applies edit_plan block edits (all or nothing) as the next revision. Blocks are named by the
	 * digests of the Planner's latest read, so a source that changed between this read and the write
	 * is read again and the edits checked against it; with expectedRevision, any other revision is a
	 * revision-conflict instead.
	 */
	async applyBlockEdits(
		id: string,
		input: unknown,
		options: ChangeOptions & { expectedRevision?: number } = {},
	): Promise<BlockEditsResult> {
		const { edits } = parseEditPlanInput(input);
		for (let attempt = 1; ; attempt++) {
			const current = await this.#row(this.deps.store, id);
			if (!current || current.deleted) throw notFound(id);
			if (current.archived) throw archived(id);
			const expected = options.expectedRevision ?? current.revision;
			if (current.revision !== expected) throw conflict(id, expected, current.revision);
			const result = applyEdits(current.source, edits);
			if (!result.ok) throw result.error;
			checkSource(result.source);
			const row = await this.#writeSource(id, result.source, expected);
			if (!row) {
				if (options.expectedRevision === undefined && attempt < 5) continue;
				throw await this.#whyNotWritten(id, expected);
			}
			this.#publish(row, "source", options);
			return { document: toView(row), changed: result.changed, removed: result.removed, kept: result.kept };
		}
	}

	async rename(id: string, title: string, options: ChangeOptions = {}): Promise<DocumentSummary> {
		const checked = checkTitle(title);
		const { store } = this.deps;
		const row = await store.one(
			store.sql`UPDATE documents SET title = ${checked}, updated_at = ${this.deps.clock.now()}
				WHERE id = ${id} AND deleted = 0 AND archived = 0
				RETURNING id, repository, title, revision, archived, deleted, created_by, created_at, updated_at`,
			documentRow,
		);
		if (!row) throw await this.#whyNotWritten(id);
		this.#publish(row, "title", options);
		return toSummary(row);
	}

	/** Archives (or unarchives) the document; doing it twice changes nothing and publishes nothing. */
	async setArchived(id: string, value: boolean, options: ChangeOptions = {}): Promise<DocumentSummary> {
		const { store } = this.deps;
		const flag = value ? 1 : 0;
		const row = await store.one(
			store.sql`UPDATE documents SET archived = ${flag}, updated_at = ${this.deps.clock.now()}
				WHERE id = ${id} AND deleted = 0 AND archived <> ${flag}
				RETURNING id, repository, title, revision, archived, deleted, created_by, created_at, updated_at`,
			documentRow,
		);
		if (row) {
			this.#publish(row, value ? "archived" : "unarchived", options);
			return toSummary(row);
		}
		const existing = await this.find(id);
		if (!existing) throw notFound(id);
		return existing;
	}

	archive(id: string, options?: ChangeOptions): Promise<DocumentSummary> {
		return this.setArchived(id, true, options);
	}

	unarchive(id: string, options?: ChangeOptions): Promise<DocumentSummary> {
		return this.setArchived(id, false, options);
	}

	/**
	 * Marks the document deleted: it is no longer found or listed, and nothing can change it. Its
	 * rows stay (soft delete); deleting it again changes nothing.
	 */
	async softDelete(id: string, options: ChangeOptions = {}): Promise<void> {
		const { store } = this.deps;
		const row = await store.one(
			store.sql`UPDATE documents SET deleted = 1, updated_at = ${this.deps.clock.now()}
				WHERE id = ${id} AND deleted = 0
				RETURNING id, repository, title, revision, archived, deleted, created_by, created_at, updated_at`,
			documentRow,
		);
		if (row) {
			this.#publish(row, "deleted", options);
			return;
		}
		const existing = await this.#row(store, id);
		if (!existing) throw notFound(id);
	}

	/** How many documents the store holds, deleted ones included (the demo seed runs only on none). */
	async count(): Promise<number> {
		const row = await this.deps.store.one(this.deps.store.sql`SELECT count(*) AS n FROM documents`);
		return Number(row?.n ?? 0);
	}

	#row(db: Db, id: string): Promise<DocumentRowWithSource | undefined> {
		return db.one(db.sql`SELECT * FROM documents WHERE id = ${id}`, documentRowWithSource);
	}

	#writeSource(id: string, source: string, expectedRevision: number) {
		const { store } = this.deps;
		return store.one(
			store.sql`UPDATE documents SET source = ${source}, revision = revision + 1, updated_at = ${this.deps.clock.now()}
				WHERE id = ${id} AND revision = ${expectedRevision} AND deleted = 0 AND archived = 0
				RETURNING *`,
			documentRowWithSource,
		);
	}

	/** Why a conditional write changed no row: not found, archived, or another revision. */
	async #whyNotWritten(id: string, expectedRevision?: number): Promise<DocumentError> {
		const row = await this.#row(this.deps.store, id);
		if (!row || row.deleted) return notFound(id);
		if (row.archived) return archived(id);
		return conflict(id, expectedRevision ?? row.revision, row.revision);
	}

	#publish(row: DocumentRow | DocumentRowWithSource, change: DocumentChange, options: ChangeOptions): void {
		this.deps.hub.publish(row.id, {
			type: "document.updated",
			documentId: row.id,
			change,
			document: toSummary(row),
			...(change === "source" && "source" in row && { source: row.source }),
			...(options.by !== undefined && { by: options.by }),
		});
	}
}

function conflict(id: string, expected: number, actual: number): DocumentError {
	return new DocumentError(
		"revision-conflict",
		`Document ${id} is at revision ${actual}, not ${expected}: someone changed it since it was read.`,
		"Read it again and apply the change to the new revision.",
		409,
		{ revision: actual },
	);
}

/** The repository's spelling as first stored (names are case-insensitive), making its row on first use. */
async function upsertRepository(db: Db, fullName: string, now: number): Promise<string> {
	const existing = await db.one(
		db.sql`SELECT full_name FROM repositories WHERE lower(full_name) = ${fullName.toLowerCase()}`,
	);
	if (existing) return String(existing.full_name);
	const [owner, name] = fullName.split("/") as [string, string];
	await db.sql`INSERT INTO repositories ${db.sql({ full_name: fullName, owner, name, created_at: now })}
		ON CONFLICT (full_name) DO NOTHING`;
	return fullName;
}

export function checkRepository(repository: string): string {
	const match = REPOSITORY_PATTERN.exec(repository);
	if (!match || match[2] === "." || match[2] === "..") {
		throw new DocumentError(
			"invalid-repository",
			`${JSON.stringify(repository.slice(0, 300))} is not a GitHub repository name.`,
			"Give it as owner/name, such as octo-org/score.",
		);
	}
	return repository;
}

export function checkTitle(title: string): string {
	const trimmed = title.trim();
	const hint = `A title is one line of 1 to ${MAX_TITLE_CHARS} characters.`;
	if (!trimmed) throw new DocumentError("invalid-title", "The title is empty.", hint);
	// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
	if (/[\u0000-\u001f\u007f]/.test(trimmed)) {
		throw new DocumentError("invalid-title", "The title holds a line break or control character.", hint);
	}
	if (codePointLength(trimmed, MAX_TITLE_CHARS) > MAX_TITLE_CHARS) {
		throw new DocumentError("invalid-title", `The title is longer than ${MAX_TITLE_CHARS} characters.`, hint);
	}
	return trimmed;
}

export function checkSource(source: string): string {
	if (utf8ByteLength(source, MAX_SOURCE_BYTES) > MAX_SOURCE_BYTES) {
		throw new DocumentError(
			"source-too-large",
			`The document would be larger than ${MAX_SOURCE_BYTES} bytes.`,
			"Split it into several documents.",
			413,
		);
	}
	return source;
}
