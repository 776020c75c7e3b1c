// Reads what an own tool's result shows in Chat, as the spec's "Structured tool errors" and "Images a
// tool made" say: a failed call's error envelope, and the images a successful call made, each hosted
// image verified from its bytes and each one Chat will not host given a plain reason.
import { z } from "zod";
import { IMAGE_TYPES, type ImageType, type SniffedImage, sniffImage } from "../images/sniff";
import { maskCredentials } from "./masking";

/** How the tool-result part said its result ended. */
export type ResultState = { isError?: boolean; preliminary?: boolean };

const isFinalFailure = (state: ResultState) => state.isError === true && state.preliminary !== true;
const isFinalSuccess = (state: ResultState) => state.isError !== true && state.preliminary !== true;

/** Code points, as the spec counts characters. */
const codePoints = (text: string) => (text.length > 4000 ? [...text].length : text.length);

// These local shapes are to be reconciled with @chopin/agent-link's toolErrorSchema and toolImageSchema
// (packages/agent-link/src/schemas/tool-results.ts) once that lands; the rules here are the spec's.

/** code and kind: an ASCII letter or digit, then up to 127 ASCII letters, digits, ".", "_" or "-". */
const identifierSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/);

/** The structured tool error envelope: exactly these fields, at both levels. */
export const toolErrorEnvelopeSchema = z.strictObject({
	error: z.strictObject({
		code: identifierSchema,
		kind: identifierSchema.optional(),
		message: z.string().refine((text) => text.length > 0 && codePoints(text) <= 4000),
	}),
});
export type ToolErrorEnvelope = z.infer<typeof toolErrorEnvelopeSchema>;

/** What Work details shows of a structured tool error: code and kind as written, message masked. */
export type ShownToolError = ToolErrorEnvelope["error"];

/** The result itself, or the value its JSON text holds (undefined when the text is not JSON). */
function fromJsonText(result: unknown): unknown {
	if (typeof result !== "string") return result;
	try {
		return JSON.parse(result);
	} catch {
		return undefined;
	}
}

/**
 * The structured tool error of a failed, final result, or null when it is to be shown as an ordinary
 * result: not failed or not final, not exactly the envelope, or with a code or kind masking would change.
 */
export function readToolError(result: unknown, state: ResultState): ShownToolError | null {
	if (!isFinalFailure(state)) return null;
	const parsed = toolErrorEnvelopeSchema.safeParse(fromJsonText(result));
	if (!parsed.success) return null;
	const { code, kind, message } = parsed.data.error;
	if (
		maskCredentials(code, "window") !== code ||
		(kind !== undefined && maskCredentials(kind, "window") !== kind)
	)
		return null;
	// The spec's rule for a structured error: a credential may hold spaces and line breaks, so only the window ends it.
	return kind === undefined
		? { code, message: maskCredentials(message, "window") }
		: { code, kind, message: maskCredentials(message, "window") };
}

/** The name Work details shows beside "Failed": kind, or code when there is none. */
export function toolErrorLabel(error: ShownToolError): string {
	return error.kind ?? error.code;
}

// Images a tool made.

/** Media type names read as the type their bytes are; the first of each type is its own name. */
export const IMAGE_MEDIA_TYPES: Readonly<Record<string, ImageType>> = {
	"image/png": "png",
	"image/apng": "png",
	"image/x-png": "png",
	"image/jpeg": "jpeg",
	"image/jpg": "jpeg",
	"image/pjpeg": "jpeg",
	"image/webp": "webp",
	"image/gif": "gif",
	"image/avif": "avif",
	"image/bmp": "bmp",
	"image/x-ms-bmp": "bmp",
	"image/x-bmp": "bmp",
	"image/x-icon": "ico",
	"image/vnd.microsoft.icon": "ico",
};

/** The type a block's mimeType names (case and parameters ignored), or null for one Chat does not show. */
export function imageTypeOf(mimeType: string): ImageType | null {
	const name = mimeType.split(";")[0]!.trim().toLowerCase();
	return Object.hasOwn(IMAGE_MEDIA_TYPES, name) ? IMAGE_MEDIA_TYPES[name]! : null;
}

export const IMAGE_REFUSAL_PREFIX = "Image couldn't be shown:";

const label = (type: ImageType) => IMAGE_TYPES[type].label;

/** The sentences of refusedImages, one per reason the spec lists. */
export const imageRefusal = {
	typeNotShown: (mimeType: string) => {
		const shown = /^[\w.+-]{1,40}\/[\w.+-]{1,60}$/.test(mimeType.trim()) ? `, ${mimeType.trim()},` : "";
		return `${IMAGE_REFUSAL_PREFIX} its type${maskCredentials(shown)} is not one Chat shows.`;
	},
	notBase64: `${IMAGE_REFUSAL_PREFIX} its data is not base64.`,
	notTheType: (named: ImageType) => `${IMAGE_REFUSAL_PREFIX} its bytes are not a ${label(named)} image.`,
	anotherType: (named: ImageType, actual: ImageType) =>
		`${IMAGE_REFUSAL_PREFIX} its bytes are a ${label(actual)} image, not the ${label(named)} its type names.`,
	cutShort: (named: ImageType) => `${IMAGE_REFUSAL_PREFIX} its ${label(named)} bytes are cut short.`,
	sizeUnreadable: (named: ImageType) =>
		`${IMAGE_REFUSAL_PREFIX} its bytes are not a ${label(named)} image whose size Chopin can read.`,
	noDataOrType: `${IMAGE_REFUSAL_PREFIX} its block has no data or type.`,
	tooLarge: (bytes: unknown) => {
		const size =
			typeof bytes === "number" && Number.isSafeInteger(bytes) && bytes > 0
				? ` (${megabytes(bytes)} MB)`
				: "";
		return `${IMAGE_REFUSAL_PREFIX} it did not fit in one message${size}.`;
	},
	couldNotStore: `${IMAGE_REFUSAL_PREFIX} Chopin could not store it.`,
	tooManyPixels: `${IMAGE_REFUSAL_PREFIX} it is more pixels than Chopin can make smaller.`,
} as const;

const megabytes = (bytes: number) => (bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, "");

/** A refusedImages entry as saved with a message; older turns saved "Image too large to show (...)". */
export const refusedImageSchema = z.strictObject({
	before: z.int().nonnegative(),
	reason: z
		.string()
		.max(4000)
		.refine(
			(reason) =>
				reason.startsWith(IMAGE_REFUSAL_PREFIX) ||
				/^Image too large to show \(\d+(?:\.\d+)? MB, limit \d+(?:\.\d+)? MB\)$/.test(reason),
		),
});
export type RefusedImage = z.infer<typeof refusedImageSchema>;

const contentResultSchema = z.object({ content: z.array(z.unknown()) });
const textBlockSchema = z.object({ type: z.literal("text"), text: z.string() });

/** An image block with data and a type; extra keys are ignored, as is an alt or caption that is no string. */
const imageBlockSchema = z.object({
	type: z.literal("image"),
	data: z.string().min(1),
	mimeType: z.string().min(1),
	alt: z.string().optional().catch(undefined),
	caption: z.string().optional().catch(undefined),
});

/** An image verified from its bytes, to be stored. `block` is its index in the result's content. */
export type ToolImage = {
	block: number;
	bytes: Uint8Array;
	sniffed: SniffedImage & { width: number; height: number };
	alt?: string;
	caption?: string;
};

/** A block Chat will not host; `before` counts this result's images ahead of it. */
export type RefusedToolImage = RefusedImage & { block: number };

export type ToolImagesRead = {
	/** The text blocks, masked: what Work details shows beside the image count. */
	texts: string[];
	/** How many image blocks the result carried, hosted or not. */
	imageCount: number;
	images: ToolImage[];
	refused: RefusedToolImage[];
};

/**
 * Reads a `{ content: [...] }` result (or its JSON text), or null when it has none. A preliminary or
 * failed result keeps its texts and image count for Work details but shows no images and no reasons.
 */
export function readToolImages(result: unknown, state: ResultState): ToolImagesRead | null {
	const parsed = contentResultSchema.safeParse(fromJsonText(result));
	if (!parsed.success) return null;
	const read: ToolImagesRead = { texts: [], imageCount: 0, images: [], refused: [] };
	const showImages = isFinalSuccess(state);
	parsed.data.content.forEach((block, index) => {
		const text = textBlockSchema.safeParse(block);
		if (text.success) read.texts.push(maskCredentials(text.data.text));
		if (!isImageBlock(block)) return;
		read.imageCount++;
		if (!showImages) return;
		const image = readImageBlock(block, index);
		if ("reason" in image)
			read.refused.push({ block: index, before: read.images.length, reason: image.reason });
		else read.images.push(image);
	});
	return read;
}

function isImageBlock(block: unknown): block is Record<string, unknown> {
	return typeof block === "object" && block !== null && (block as { type?: unknown }).type === "image";
}

function readImageBlock(block: Record<string, unknown>, index: number): ToolImage | { reason: string } {
	// The client sets tooLarge when it could not make the image fit; such a block is never stored.
	if (block.tooLarge !== undefined) return { reason: imageRefusal.tooLarge(block.tooLarge) };
	const parsed = imageBlockSchema.safeParse(block);
	if (!parsed.success) return { reason: imageRefusal.noDataOrType };
	const { data, mimeType, alt, caption } = parsed.data;
	const named = imageTypeOf(mimeType);
	if (!named) return { reason: imageRefusal.typeNotShown(mimeType) };
	const bytes = decodeBase64(data);
	if (!bytes) return { reason: imageRefusal.notBase64 };
	const sniffed = sniffImage(bytes);
	if (!sniffed) return { reason: imageRefusal.notTheType(named) };
	if (sniffed.type !== named) return { reason: imageRefusal.anotherType(named, sniffed.type) };
	if (sniffed.truncated) return { reason: imageRefusal.cutShort(named) };
	if (!sniffed.width || !sniffed.height) return { reason: imageRefusal.sizeUnreadable(named) };
	const image: ToolImage = {
		block: index,
		bytes,
		sniffed: { ...sniffed, width: sniffed.width, height: sniffed.height },
	};
	if (alt !== undefined) image.alt = alt;
	if (caption !== undefined) image.caption = caption;
	return image;
}

/** Standard base64 (+ and /), with or without its "=" padding; null for anything else, whitespace included. */
export function decodeBase64(data: string): Uint8Array | null {
	const body = data.endsWith("==") ? data.slice(0, -2) : data.endsWith("=") ? data.slice(0, -1) : data;
	if (body.length === 0 || body.length % 4 === 1 || !/^[A-Za-z0-9+/]*$/.test(body)) return null;
	if (body.length !== data.length && data.length % 4 !== 0) return null;
	return new Uint8Array(Buffer.from(body, "base64"));
}

/** What a tool's row in Work details shows: its text blocks and how many images, never their bytes. */
export function workDetailsText(read: ToolImagesRead): string {
	const count = read.imageCount === 0 ? [] : [`${read.imageCount} image${read.imageCount === 1 ? "" : "s"}`];
	return [...read.texts, ...count].join("\n\n");
}
