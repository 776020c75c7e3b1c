// Makes the smaller copies Chat needs: a stored copy of an image over MAX_STORED_IMAGE_BYTES, and the
// thumbnails Chat reads at fixed widths. Bun.Image does the decoding and encoding.
import { type ImageType, type SniffedImage, sniffImage } from "./sniff";

/** MAX_STORED_IMAGE_BYTES when the operator sets none: 10 MiB of decoded bytes per image. */
export const MAX_STORED_IMAGE_BYTES = 10 * 1024 * 1024;

/** A smaller stored copy is at most this many pixels on its longest side. */
export const MAX_STORED_IMAGE_SIDE = 4096;

/**
 * The most pixels Chopin decodes to make a smaller copy: 8192 × 8192 (about 256 MiB of RGBA while it
 * works). Every hosted image may need one (a stored copy or a thumbnail), so an image with more is
 * refused whatever its byte size, before any pixel buffer is allocated.
 */
export const MAX_RESIZE_PIXELS = 8192 * 8192;

/** Slack's thumbnail widths; Chat asks for one with ?w=. */
export const THUMBNAIL_WIDTHS = [64, 80, 160, 360, 480, 720, 960, 1024] as const;
export type ThumbnailWidth = (typeof THUMBNAIL_WIDTHS)[number];

export type ImageErrorCode = "image-too-many-pixels" | "image-not-resizable" | "thumbnail-width";

/** A stable code, one sentence, and a hint, like every Chopin error. */
export class ImageError extends Error {
	constructor(
		readonly code: ImageErrorCode,
		message: string,
		readonly hint?: string,
	) {
		super(message);
		this.name = "ImageError";
	}
}

/** Bytes with the type they are, as stored or served. */
export type ImageBytes = {
	bytes: Uint8Array;
	type: ImageType;
	mediaType: SniffedImage["mediaType"];
	ext: SniffedImage["ext"];
	width: number;
	height: number;
};

export type FittedImage = ImageBytes & { resized: boolean };

/** Whether an image of this size is one Chopin can make smaller copies of. */
export function hasTooManyPixels(width: number, height: number, maxPixels = MAX_RESIZE_PIXELS): boolean {
	return width * height > maxPixels;
}

/**
 * The bytes to store for an image: itself when it fits maxBytes, else a smaller copy (at most 4096 px
 * on its longest side, then narrower until it fits). A JPEG stays a JPEG; anything else becomes WebP,
 * which keeps transparency. Throws ImageError: image-too-many-pixels, or image-not-resizable when no
 * copy can be made here (AVIF and ICO do not decode on Linux) or none fits.
 */
export async function fitImage(
	bytes: Uint8Array,
	sniffed: SniffedImage,
	maxBytes = MAX_STORED_IMAGE_BYTES,
	maxPixels = MAX_RESIZE_PIXELS,
): Promise<FittedImage> {
	const { width, height } = requireSize(sniffed);
	if (hasTooManyPixels(width, height, maxPixels)) throw tooManyPixels(width, height, maxPixels);
	if (bytes.length <= maxBytes) return { ...described(bytes, sniffed, width, height), resized: false };

	const keepJpeg = sniffed.type === "jpeg";
	let targetWidth = Math.max(
		1,
		Math.round(width * Math.min(1, MAX_STORED_IMAGE_SIDE / Math.max(width, height))),
	);
	// Each pass shrinks by the square root of how far over it is (bytes follow area), with a margin.
	for (let attempt = 0; attempt < 12; attempt++) {
		const out = await encode(bytes, targetWidth, keepJpeg, maxPixels);
		if (out.bytes.length <= maxBytes) return { ...out, resized: true };
		if (targetWidth === 1) break;
		const ratio = Math.sqrt(maxBytes / out.bytes.length) * 0.9;
		targetWidth = Math.max(1, Math.min(targetWidth - 1, Math.floor(targetWidth * ratio)));
	}
	throw new ImageError(
		"image-not-resizable",
		`No copy of this ${sniffed.type} image fits in ${maxBytes} bytes.`,
		"Raise MAX_STORED_IMAGE_BYTES or send a smaller image.",
	);
}

/**
 * A copy `width` pixels wide for Chat, or the image itself when it is no wider. Null when this server
 * cannot decode the type (AVIF, ICO): Chat then shows the stored image as it is.
 */
export async function thumbnail(
	bytes: Uint8Array,
	width: number,
	maxPixels = MAX_RESIZE_PIXELS,
): Promise<ImageBytes | null> {
	if (!(THUMBNAIL_WIDTHS as readonly number[]).includes(width)) {
		throw new ImageError(
			"thumbnail-width",
			`${width} is not a thumbnail width Chat serves.`,
			`Ask for one of ${THUMBNAIL_WIDTHS.join(", ")}.`,
		);
	}
	const sniffed = sniffImage(bytes);
	if (!sniffed?.width || !sniffed.height) return null;
	if (hasTooManyPixels(sniffed.width, sniffed.height, maxPixels)) {
		throw tooManyPixels(sniffed.width, sniffed.height, maxPixels);
	}
	if (sniffed.width <= width) return described(bytes, sniffed, sniffed.width, sniffed.height);
	try {
		return await encode(bytes, width, sniffed.type === "jpeg", maxPixels);
	} catch (error) {
		if (error instanceof ImageError && error.code === "image-not-resizable") return null;
		throw error;
	}
}

function requireSize(sniffed: SniffedImage): { width: number; height: number } {
	if (!sniffed.width || !sniffed.height) {
		throw new ImageError("image-not-resizable", `The size of this ${sniffed.type} image cannot be read.`);
	}
	return { width: sniffed.width, height: sniffed.height };
}

function tooManyPixels(width: number, height: number, maxPixels: number): ImageError {
	return new ImageError(
		"image-too-many-pixels",
		`A ${width} × ${height} image is more pixels than Chopin can make smaller (at most ${maxPixels}).`,
		"Send a smaller image.",
	);
}

function described(bytes: Uint8Array, sniffed: SniffedImage, width: number, height: number): ImageBytes {
	return { bytes, type: sniffed.type, mediaType: sniffed.mediaType, ext: sniffed.ext, width, height };
}

/** One resize and encode; Bun.Image keeps the aspect ratio when only the width is given. */
async function encode(
	bytes: Uint8Array,
	width: number,
	jpeg: boolean,
	maxPixels: number,
): Promise<ImageBytes> {
	let out: Uint8Array;
	try {
		const image = new Bun.Image(bytes, { maxPixels }).resize(width, undefined, { withoutEnlargement: true });
		out = await (jpeg ? image.jpeg({ quality: 85 }) : image.webp({ quality: 80 })).bytes();
	} catch (error) {
		const code = (error as { code?: unknown }).code;
		if (code === "ERR_IMAGE_TOO_MANY_PIXELS") {
			throw new ImageError(
				"image-too-many-pixels",
				"This image is more pixels than Chopin can make smaller.",
			);
		}
		throw new ImageError("image-not-resizable", `This image could not be decoded here (${String(code)}).`);
	}
	const sniffed = sniffImage(out);
	if (!sniffed?.width || !sniffed.height) {
		throw new ImageError("image-not-resizable", "The smaller copy could not be read back.");
	}
	return described(out, sniffed, sniffed.width, sniffed.height);
}
