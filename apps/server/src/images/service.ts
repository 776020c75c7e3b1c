// A document's own images: stored from bytes (type from the bytes, content-addressed, fitted to the size
// limit), looked up for serving only to readers the caller admits, with Chat's thumbnails cached.
import { createHash } from "node:crypto";
import { z } from "zod";
import { imageTypeOf } from "../chat/tool-results";
import { readDocumentState } from "../documents/document-state";
import type { DomainDeps } from "../domain-deps";
import { DomainError } from "../domain-error";
import type { Db } from "../store/store";
import {
	type FittedImage,
	fitImage,
	ImageError,
	MAX_RESIZE_PIXELS,
	MAX_STORED_IMAGE_BYTES,
	THUMBNAIL_WIDTHS,
	thumbnail,
} from "./resize";
import { IMAGE_TYPES, type ImageType, sniffImage } from "./sniff";

/** What upload_image and upload_plan_image take; a tool's own images may be any hosted type. */
export const UPLOAD_IMAGE_TYPES: readonly ImageType[] = ["png", "jpeg", "webp", "gif"];
export const HOSTED_IMAGE_TYPES = Object.keys(IMAGE_TYPES) as readonly ImageType[];

const EXTS = new Set<string>(Object.values(IMAGE_TYPES).map((t) => t.ext));
const PATH_PATTERN = /^\/images\/([0-9a-f]{64})\.([a-z]+)$/;

export type DocumentImageErrorCode =
	| "document-not-found"
	| "document-archived"
	| "image-type-unsupported"
	| "image-type-mismatch"
	| "image-truncated"
	| "image-size-unreadable"
	| "image-too-many-pixels"
	| "image-not-resizable"
	| "thumbnail-width";

export class DocumentImageError extends DomainError {
	override readonly name = "DocumentImageError";
	constructor(
		override readonly code: DocumentImageErrorCode,
		message: string,
		hint?: string,
		status = 400,
	) {
		super(code, message, hint, status);
	}
}

export const storedImageSchema = z.strictObject({
	/** `/images/<sha256>.<ext>`: the Markdown a document, a preview or Chat uses. */
	path: z.string(),
	/** SHA-256 (hex) of the stored bytes. */
	sha256: z.string(),
	ext: z.string(),
	mediaType: z.string(),
	width: z.int().positive(),
	height: z.int().positive(),
	/** Stored bytes. */
	size: z.int().positive(),
});
export type StoredImage = z.infer<typeof storedImageSchema>;

/** An image to serve: its bytes and the type they are. */
export interface ServedImage {
	bytes: Uint8Array;
	mediaType: string;
	ext: string;
	sha256: string;
}

/** Decided by the caller (the route knows who asks): may this person read any of these documents? */
export type CanRead = (documentIds: readonly string[]) => boolean | Promise<boolean>;

const imageRow = z.object({
	document_id: z.string(),
	sha256: z.string(),
	ext: z.string(),
	media_type: z.string(),
	size: z.number().int(),
	width: z.number().int().nullable(),
	height: z.number().int().nullable(),
});
type ImageRow = z.infer<typeof imageRow>;

const bytesRow = z.object({ bytes: z.instanceof(Uint8Array), media_type: z.string(), ext: z.string() });

export function imagePath(sha256: string, ext: string): string {
	return `/images/${sha256}.${ext}`;
}

/** An image's Markdown: its alt text escaped so it cannot end the brackets early. */
export function imageMarkdown(alt: string, path: string): string {
	return `![${alt.replace(/[\\[\]]/g, "\\$&")}](${path})`;
}

/** The digest and extension of an `/images/<sha256>.<ext>` path, or null for any other. */
export function parseImagePath(path: string): { sha256: string; ext: string } | null {
	const match = PATH_PATTERN.exec(path);
	return match && EXTS.has(match[2]!) ? { sha256: match[1]!, ext: match[2]! } : null;
}

/** Headers an image response carries: its own type, never sniffed, and a sandbox so nothing in it runs. */
export function imageResponseHeaders(mediaType: string): Record<string, string> {
	return {
		"content-type": mediaType,
		"x-content-type-options": "nosniff",
		"content-security-policy": "default-src 'none'; sandbox",
		// Private: whether it is served depends on who asks. Immutable: the path is the content's digest.
		"cache-control": "private, max-age=31536000, immutable",
	};
}

const sha256Hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

function toStored(row: ImageRow): StoredImage {
	return {
		path: imagePath(row.sha256, row.ext),
		sha256: row.sha256,
		ext: row.ext,
		mediaType: row.media_type,
		width: row.width ?? 1,
		height: row.height ?? 1,
		size: row.size,
	};
}

export interface ImageServiceOptions {
	/** MAX_STORED_IMAGE_BYTES: a larger image is stored as a smaller copy. */
	maxStoredImageBytes?: number;
	maxPixels?: number;
}

export interface StoreImageOptions {
	/** The types accepted (default: PNG, JPEG, WebP and GIF, as upload_image takes). */
	types?: readonly ImageType[];
	/** The type the caller claimed (upload_plan_image's mimeType): bytes of another type are refused. */
	declaredMediaType?: string;
	/** A smaller copy above this many bytes when below the service's limit (upload_plan_image: 1 MiB). */
	maxBytes?: number;
}

export class DocumentImageService {
	readonly #maxBytes: number;
	readonly #maxPixels: number;

	constructor(
		private readonly deps: DomainDeps,
		options: ImageServiceOptions = {},
	) {
		this.#maxBytes = options.maxStoredImageBytes ?? MAX_STORED_IMAGE_BYTES;
		this.#maxPixels = options.maxPixels ?? MAX_RESIZE_PIXELS;
	}

	/**
	 * Stores bytes as one of the document's images and returns its path. The type is what the bytes
	 * are; an image over the size limit is stored as a smaller copy. The same bytes give the same
	 * path again, without being decoded again.
	 */
	async store(documentId: string, bytes: Uint8Array, options: StoreImageOptions = {}): Promise<StoredImage> {
		await this.#checkWritable(this.deps.store, documentId);
		const types = options.types ?? UPLOAD_IMAGE_TYPES;
		const sniffed = sniffImage(bytes);
		const declared =
			options.declaredMediaType === undefined ? undefined : imageTypeOf(options.declaredMediaType);
		if (options.declaredMediaType !== undefined && (!declared || !types.includes(declared))) {
			throw unsupported(`The type ${JSON.stringify(options.declaredMediaType.slice(0, 100))}`, types);
		}
		if (!sniffed) throw unsupported("These bytes", types, "are no image");
		if (!types.includes(sniffed.type)) throw unsupported(`A ${IMAGE_TYPES[sniffed.type].label} image`, types);
		if (declared && declared !== sniffed.type) {
			throw new DocumentImageError(
				"image-type-mismatch",
				`The bytes are a ${IMAGE_TYPES[sniffed.type].label} image, not the ${IMAGE_TYPES[declared].label} declared.`,
				"Declare the type the bytes are.",
			);
		}
		if (sniffed.truncated) {
			throw new DocumentImageError(
				"image-truncated",
				`The ${IMAGE_TYPES[sniffed.type].label} bytes are cut short.`,
				"Send the whole file.",
			);
		}
		if (!sniffed.width || !sniffed.height) {
			throw new DocumentImageError(
				"image-size-unreadable",
				`The size of this ${IMAGE_TYPES[sniffed.type].label} image cannot be read.`,
			);
		}
		const source = sha256Hex(bytes);
		const maxBytes = Math.min(options.maxBytes ?? this.#maxBytes, this.#maxBytes);
		// The largest copy of these bytes within the limit; one stored under a larger limit does not count, so
		// these bytes get their own smaller copy once.
		const existing = await this.deps.store.one(
			this.deps.store
				.sql`SELECT document_id, sha256, ext, media_type, size, width, height FROM document_images
				WHERE document_id = ${documentId} AND (source_sha256 = ${source} OR sha256 = ${source})
				AND size <= ${maxBytes} ORDER BY size DESC, sha256 LIMIT 1`,
			imageRow,
		);
		if (existing) return toStored(existing);
		let fitted: FittedImage;
		try {
			fitted = await fitImage(bytes, sniffed, maxBytes, this.#maxPixels);
		} catch (error) {
			if (error instanceof ImageError && error.code !== "thumbnail-width") {
				throw new DocumentImageError(error.code, error.message, error.hint);
			}
			throw error;
		}
		return this.storeFitted(documentId, fitted, source);
	}

	/**
	 * Stores an image already checked and fitted (a tool's image, see chat/tool-image-store.ts).
	 * `source` is the digest of the bytes before fitting, when known, for later dedupe.
	 */
	async storeFitted(documentId: string, image: FittedImage, source?: string): Promise<StoredImage> {
		const sha256 = sha256Hex(image.bytes);
		return this.deps.store.transaction(async (tx) => {
			await this.#checkWritable(tx, documentId);
			await tx.sql`INSERT INTO document_images ${tx.sql({
				document_id: documentId,
				sha256,
				ext: image.ext,
				media_type: image.mediaType,
				size: image.bytes.length,
				bytes: image.bytes,
				created_at: this.deps.clock.now(),
				source_sha256: source ?? sha256,
				width: image.width,
				height: image.height,
			})} ON CONFLICT (document_id, sha256) DO NOTHING`;
			const row = await tx.one(
				tx.sql`SELECT document_id, sha256, ext, media_type, size, width, height FROM document_images
					WHERE document_id = ${documentId} AND sha256 = ${sha256}`,
				imageRow,
			);
			return toStored(row!);
		});
	}

	/** The document's images, oldest first (metadata only). */
	async list(documentId: string): Promise<StoredImage[]> {
		const rows = await this.deps.store.many(
			this.deps.store
				.sql`SELECT document_id, sha256, ext, media_type, size, width, height FROM document_images
				WHERE document_id = ${documentId} ORDER BY created_at, sha256`,
			imageRow,
		);
		return rows.map(toStored);
	}

	/** Whether path is one of this document's own images (the only images a document shows). */
	async isDocumentImage(documentId: string, path: string): Promise<boolean> {
		const parsed = parseImagePath(path);
		if (!parsed) return false;
		const row = await this.deps.store.one(
			this.deps.store.sql`SELECT 1 AS ok FROM document_images
				WHERE document_id = ${documentId} AND sha256 = ${parsed.sha256} AND ext = ${parsed.ext}`,
		);
		return row !== undefined;
	}

	/**
	 * The image at /images/<sha256>.<ext> for serving, or null when no readable document holds it:
	 * canRead gets every (not deleted) document holding it, and null is also the answer when it
	 * refuses them all, so a path never tells a stranger that the image exists.
	 */
	async find(sha256: string, ext: string, canRead: CanRead): Promise<ServedImage | null> {
		if (!/^[0-9a-f]{64}$/.test(sha256) || !EXTS.has(ext)) return null;
		const { store } = this.deps;
		const holders = await store.many(
			store.sql`SELECT DISTINCT i.document_id FROM document_images i JOIN documents d ON d.id = i.document_id
				WHERE i.sha256 = ${sha256} AND i.ext = ${ext} AND d.deleted = 0 ORDER BY i.document_id`,
		);
		const ids = holders.map((r) => String(r.document_id));
		if (ids.length === 0 || !(await canRead(ids))) return null;
		const row = await store.one(
			store.sql`SELECT bytes, media_type, ext FROM document_images
				WHERE sha256 = ${sha256} AND ext = ${ext} AND document_id = ${ids[0]!}`,
			bytesRow,
		);
		return row ? { bytes: row.bytes, mediaType: row.media_type, ext: row.ext, sha256 } : null;
	}

	/**
	 * Chat's copy `width` pixels wide (one of THUMBNAIL_WIDTHS), made once and kept; the image itself
	 * when it is no wider or this server cannot decode its type. Null exactly when find is.
	 */
	async thumbnail(sha256: string, ext: string, width: number, canRead: CanRead): Promise<ServedImage | null> {
		if (!(THUMBNAIL_WIDTHS as readonly number[]).includes(width)) {
			throw new DocumentImageError(
				"thumbnail-width",
				`${width} is not a thumbnail width Chat serves.`,
				`Ask for one of ${THUMBNAIL_WIDTHS.join(", ")}.`,
			);
		}
		const original = await this.find(sha256, ext, canRead);
		if (!original) return null;
		const { store } = this.deps;
		const cached = await store.one(
			store.sql`SELECT bytes, media_type, ext FROM image_thumbnails WHERE sha256 = ${sha256} AND width = ${width}`,
			bytesRow,
		);
		if (cached) return { bytes: cached.bytes, mediaType: cached.media_type, ext: cached.ext, sha256 };
		let copy: Awaited<ReturnType<typeof thumbnail>>;
		try {
			copy = await thumbnail(original.bytes, width, this.#maxPixels);
		} catch (error) {
			// Stored images were checked when stored; one that still cannot be shrunk is served as it is.
			if (error instanceof ImageError) return original;
			throw error;
		}
		if (!copy || copy.bytes === original.bytes) return original;
		await store.sql`INSERT INTO image_thumbnails ${store.sql({
			sha256,
			width,
			media_type: copy.mediaType,
			ext: copy.ext,
			bytes: copy.bytes,
			created_at: this.deps.clock.now(),
		})} ON CONFLICT (sha256, width) DO NOTHING`;
		return { bytes: copy.bytes, mediaType: copy.mediaType, ext: copy.ext, sha256 };
	}

	async #checkWritable(db: Db, documentId: string): Promise<void> {
		const state = await readDocumentState(db, documentId);
		if (!state || state.deleted) {
			throw new DocumentImageError(
				"document-not-found",
				`No document ${documentId} exists, or it was deleted.`,
				undefined,
				404,
			);
		}
		if (state.archived) {
			throw new DocumentImageError(
				"document-archived",
				`Document ${documentId} is archived, so no image can be added to it.`,
				"Unarchive it first.",
				409,
			);
		}
	}
}

function unsupported(
	what: string,
	types: readonly ImageType[],
	verb = "is not accepted",
): DocumentImageError {
	const labels = types.map((t) => IMAGE_TYPES[t].label).join(", ");
	return new DocumentImageError(
		"image-type-unsupported",
		`${what} ${verb}: an image here is one of ${labels}.`,
		"Send the image as one of those types.",
		415,
	);
}
