/**
 * Smaller copies of a tool's image with Bun.Image, where the runtime has it (Bun; not Node). A
 * JPEG stays a JPEG and anything else becomes a WebP, which keeps transparency, as the server's
 * stored copies do. Looked up at run time so the client still loads where Bun is absent.
 */

/** A copy of base64 image data in at most maxChars of base64, or null when none can be made here. */
export type ImageShrinker = (
	data: string,
	maxChars: number,
) => Promise<{ data: string; mimeType: string } | null>;

interface ImageLike {
	metadata(): Promise<{ width: number; height: number; format: string }>;
	resize(width: number, height?: number, options?: { withoutEnlargement?: boolean }): ImageLike;
	jpeg(options: { quality: number }): ImageLike;
	webp(options: { quality: number }): ImageLike;
	bytes(): Promise<Uint8Array>;
}
type ImageClass = new (bytes: Uint8Array, options?: { maxPixels?: number }) => ImageLike;
type BufferLike = {
	from(data: string | Uint8Array, encoding?: string): Uint8Array & { toString(encoding: string): string };
};

/** The most pixels decoded to make a copy, as the server allows (about 256 MiB of RGBA). */
const MAX_PIXELS = 8192 * 8192;
const ATTEMPTS = 12;
const MAX_SIDE = 4096;

export function bunImageShrinker(): ImageShrinker | null {
	const Image = (globalThis as { Bun?: { Image?: ImageClass } }).Bun?.Image;
	const Buffer = (globalThis as { Buffer?: BufferLike }).Buffer;
	if (typeof Image !== "function" || !Buffer) return null;
	return async (data, maxChars) => {
		const maxBytes = Math.floor(maxChars / 4) * 3;
		if (maxBytes <= 0) return null;
		try {
			const bytes = Buffer.from(data, "base64");
			const { width, height, format } = await new Image(bytes, { maxPixels: MAX_PIXELS }).metadata();
			const jpeg = format === "jpeg";
			// Re-encoding alone often fits, so the first pass keeps the size (up to 4096 px on the
			// longest side, as the server's stored copies); bytes follow area, so each later pass
			// narrows by the square root of how far over the last one was.
			let target = Math.max(1, Math.floor(width * Math.min(1, MAX_SIDE / Math.max(width, height))));
			for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
				const image = new Image(bytes, { maxPixels: MAX_PIXELS }).resize(target, undefined, {
					withoutEnlargement: true,
				});
				const out = await (jpeg ? image.jpeg({ quality: 85 }) : image.webp({ quality: 80 })).bytes();
				if (out.length <= maxBytes) {
					return { data: Buffer.from(out).toString("base64"), mimeType: jpeg ? "image/jpeg" : "image/webp" };
				}
				if (target === 1) break;
				target = Math.max(
					1,
					Math.min(target - 1, Math.floor(target * Math.sqrt(maxBytes / out.length) * 0.9)),
				);
			}
			return null;
		} catch {
			// Bytes that do not decode (or a type this runtime cannot read) get no copy.
			return null;
		}
	};
}
