/**
 * Fitting a tool-result part over the 2 MiB frame limit (spec: Images a tool made): each image
 * that does not fit, largest first and the later of equals first, becomes a smaller copy that
 * fits what is left of the message, or, where no copy can be made, an empty block with tooLarge
 * set to the bytes it would have taken. A result that still does not fit is not sent.
 */
import { MAX_FRAME_BYTES } from "../limits";
import type { Part } from "../schemas/client-messages";
import { base64DecodedLength, utf8ByteLength } from "../text";
import type { ImageShrinker } from "./bun-image";

type Block = { type?: unknown; data?: unknown; mimeType?: unknown; tooLarge?: number };

/**
 * The part with its images fitted, or null when the result has no image to fit. The caller
 * encodes it, which throws message-too-large when it still does not fit.
 */
export async function fitToolResultImages(message: Part, shrink: ImageShrinker | null): Promise<Part | null> {
	const part = message.part;
	if (part.type !== "tool-result") return null;
	const asText = typeof part.result === "string";
	let result: unknown;
	try {
		result = asText ? JSON.parse(part.result as string) : structuredClone(part.result);
	} catch {
		return null;
	}
	const content = (result as { content?: unknown } | null)?.content;
	if (!Array.isArray(content)) return null;
	const images = content
		.map((block: Block, index) => ({ block, index }))
		.filter(({ block }) => block?.type === "image" && typeof block.data === "string" && block.data.length > 0)
		.sort((a, b) => (b.block.data as string).length - (a.block.data as string).length || b.index - a.index);
	if (images.length === 0) return null;

	const build = (): Part => ({
		...message,
		part: { ...part, result: (asText ? JSON.stringify(result) : result) as never },
	});
	const size = () => utf8ByteLength(JSON.stringify(build()));
	for (const { block } of images) {
		if (size() <= MAX_FRAME_BYTES) break;
		const original = block.data as string;
		block.data = "";
		// Base64 needs no escaping, so each character left is one byte of room, in either form.
		const room = MAX_FRAME_BYTES - size();
		const copy = room > 0 && shrink ? await shrink(original, room) : null;
		if (copy) {
			block.data = copy.data;
			block.mimeType = copy.mimeType;
		} else {
			block.tooLarge = base64DecodedLength(original);
		}
	}
	return build();
}
