// Stores the images a tool result carried, in order, as the turn's message shows them: each as a smaller
// copy when it is over MAX_STORED_IMAGE_BYTES, and each that cannot be stored given a reason instead.
import { type FittedImage, fitImage, ImageError, MAX_STORED_IMAGE_BYTES } from "../images/resize";
import { imageRefusal, type RefusedImage, type ToolImagesRead } from "./tool-results";

export type StoredToolImages<T> = { stored: T[]; refused: RefusedImage[] };

export type StoreToolImagesOptions<T> = {
	/** Images already on the turn's message, from earlier calls: `before` counts them too. */
	imagesOnMessage: number;
	/** Stores one image's bytes (as the document's own image) and says where it went. */
	store: (image: FittedImage & { alt?: string; caption?: string }) => Promise<T>;
	maxBytes?: number;
	maxPixels?: number;
};

/**
 * Stores a result's images in order, each as a smaller copy when over maxBytes, and lists every block
 * Chat will not show in the result's block order. A store that fails gives no detail of why.
 */
export async function storeToolImages<T>(
	read: ToolImagesRead,
	{ imagesOnMessage, store, maxBytes = MAX_STORED_IMAGE_BYTES, maxPixels }: StoreToolImagesOptions<T>,
): Promise<StoredToolImages<T>> {
	const out: StoredToolImages<T> = { stored: [], refused: [] };
	const entries = [...read.images, ...read.refused].sort((a, b) => a.block - b.block);
	for (const entry of entries) {
		const before = imagesOnMessage + out.stored.length;
		if ("reason" in entry) {
			out.refused.push({ before, reason: entry.reason });
			continue;
		}
		try {
			const fitted = await fitImage(entry.bytes, entry.sniffed, maxBytes, maxPixels);
			out.stored.push(await store({ ...fitted, alt: entry.alt, caption: entry.caption }));
		} catch (error) {
			const pixels = error instanceof ImageError && error.code === "image-too-many-pixels";
			out.refused.push({ before, reason: pixels ? imageRefusal.tooManyPixels : imageRefusal.couldNotStore });
		}
	}
	return out;
}
