/**
 * Conventions inside an own tool's result (still any JSON on the wire): the structured tool
 * error envelope, the image blocks a tool made, and a reader for `{ content: [...] }` results.
 */
import { z } from "zod";
import { IDENTIFIER_PATTERN, TOOL_ERROR_MESSAGE_MAX } from "../limits";
import { chars, count } from "./fields";

/** code and kind: an ASCII letter or digit, then up to 127 of letters, digits, . _ - */
export const toolErrorIdentifierSchema = z.string().regex(IDENTIFIER_PATTERN, {
	error: "must be an ASCII letter or digit, then up to 127 of A-Z a-z 0-9 . _ -",
});

/** The envelope has exactly these fields, at both levels. */
export const toolErrorSchema = z.strictObject({
	error: z.strictObject({
		code: toolErrorIdentifierSchema,
		kind: toolErrorIdentifierSchema.optional(),
		message: chars(1, TOOL_ERROR_MESSAGE_MAX),
	}),
});
export type ToolError = z.infer<typeof toolErrorSchema>;

/** A result or its JSON text, as the spec lets a tool send either. */
function fromJsonText(result: unknown): unknown {
	if (typeof result !== "string") return result;
	try {
		return JSON.parse(result);
	} catch {
		return undefined;
	}
}

/**
 * The structured tool error in a failed, final result, or null when the result is an ordinary
 * one. The caller decides whether the result was failed and final (isError and not preliminary).
 */
export function readToolError(result: unknown): ToolError | null {
	const parsed = toolErrorSchema.safeParse(fromJsonText(result));
	return parsed.success ? parsed.data : null;
}

/** Canonical image types a tool may make, and the other names read as the type the bytes are. */
export const TOOL_IMAGE_TYPES = [
	"image/png",
	"image/jpeg",
	"image/webp",
	"image/gif",
	"image/avif",
	"image/bmp",
	"image/x-icon",
] as const;
export const TOOL_IMAGE_TYPE_ALIASES: Readonly<Record<string, (typeof TOOL_IMAGE_TYPES)[number]>> = {
	"image/jpg": "image/jpeg",
	"image/apng": "image/png",
	"image/x-ms-bmp": "image/bmp",
	"image/vnd.microsoft.icon": "image/x-icon",
};

/** The canonical type of a block's mimeType, or null for a type Chat does not show (SVG, HTML, ...). */
export function toolImageType(mimeType: string): (typeof TOOL_IMAGE_TYPES)[number] | null {
	const type = mimeType.trim().toLowerCase();
	if ((TOOL_IMAGE_TYPES as readonly string[]).includes(type))
		return type as (typeof TOOL_IMAGE_TYPES)[number];
	return TOOL_IMAGE_TYPE_ALIASES[type] ?? null;
}

/** alt and caption are kept as given, an empty string included; a non-string is ignored. */
const optionalText = z.string().optional().catch(undefined);

/**
 * An image block. Extra keys are ignored (dropped), as are a non-string alt or caption.
 * data and mimeType are any strings here: whether Chat can host them is the server's call, and a
 * refused one gets a reason. tooLarge is the byte size of an image the client could not shrink
 * (data is then empty); such a block is never stored.
 */
export const toolImageSchema = z.object({
	type: z.literal("image"),
	data: z.string(),
	mimeType: z.string(),
	alt: optionalText,
	caption: optionalText,
	tooLarge: count.optional(),
});
export type ToolImage = z.infer<typeof toolImageSchema>;

/** A text block; extra keys (MCP annotations and the like) are ignored. */
export const toolTextBlockSchema = z.object({ type: z.literal("text"), text: z.string() });
export type ToolTextBlock = z.infer<typeof toolTextBlockSchema>;

/** A tool result with content blocks; other fields of the result (isError, _meta, ...) are ignored. */
export const toolContentResultSchema = z.object({ content: z.array(z.unknown()) });

/** One content block as read: text, an image, a block of type image that is not one, or anything else. */
export type ToolResultBlock =
	| { kind: "text"; block: ToolTextBlock }
	| { kind: "image"; block: ToolImage }
	| { kind: "invalid-image"; reason: string }
	| { kind: "other"; block: unknown };

/**
 * Reads a tool result `{ content: [...] }`, or its JSON text, into its blocks in order, or null
 * when it has no content array. An image block without data or mimeType is "invalid-image", the
 * case the spec reports as "its block has no data or type".
 */
export function readToolResult(result: unknown): ToolResultBlock[] | null {
	const parsed = toolContentResultSchema.safeParse(fromJsonText(result));
	if (!parsed.success) return null;
	return parsed.data.content.map((block): ToolResultBlock => {
		const type = typeof block === "object" && block !== null ? (block as { type?: unknown }).type : undefined;
		if (type === "text") {
			const text = toolTextBlockSchema.safeParse(block);
			return text.success ? { kind: "text", block: text.data } : { kind: "other", block };
		}
		if (type === "image") {
			const image = toolImageSchema.safeParse(block);
			if (image.success) return { kind: "image", block: image.data };
			const field = image.error.issues[0]?.path[0];
			return { kind: "invalid-image", reason: `its ${String(field ?? "block")} is missing or not valid` };
		}
		return { kind: "other", block };
	});
}

/** The images of a tool result, in order (invalid image blocks left out). */
export function toolResultImages(result: unknown): ToolImage[] {
	return (readToolResult(result) ?? []).flatMap((entry) => (entry.kind === "image" ? [entry.block] : []));
}
