import { describe, expect, test } from "bun:test";
import {
	fitImage,
	ImageError,
	MAX_RESIZE_PIXELS,
	MAX_STORED_IMAGE_BYTES,
	MAX_STORED_IMAGE_SIDE,
	THUMBNAIL_WIDTHS,
	thumbnail,
} from "./resize";
import { type SniffedImage, sniffImage } from "./sniff";
import { makeAvif, makeBmp, makeGif, makeIco, makeJpeg, makePng } from "./test-images";

function sniff(bytes: Uint8Array): SniffedImage {
	const sniffed = sniffImage(bytes);
	if (!sniffed) throw new Error("test image did not sniff");
	return sniffed;
}

async function rejection(promise: Promise<unknown>): Promise<ImageError> {
	try {
		await promise;
	} catch (error) {
		if (error instanceof ImageError) return error;
		throw error;
	}
	throw new Error("expected an ImageError");
}

describe("fitImage", () => {
	test("the defaults are the spec's: 10 MiB and 4096 px", () => {
		expect(MAX_STORED_IMAGE_BYTES).toBe(10 * 1024 * 1024);
		expect(MAX_STORED_IMAGE_SIDE).toBe(4096);
		expect(MAX_RESIZE_PIXELS).toBe(8192 * 8192);
	});

	test("an image that fits is stored as it is", async () => {
		const png = makePng(40, 30);
		const fitted = await fitImage(png, sniff(png), png.length);
		expect(fitted.resized).toBe(false);
		expect(fitted.bytes).toBe(png);
		expect(fitted).toMatchObject({ type: "png", mediaType: "image/png", ext: "png", width: 40, height: 30 });
	});

	test("a PNG over the limit comes out under it as a WebP with the same aspect", async () => {
		const png = makePng(300, 200, { noise: true });
		const maxBytes = 20_000;
		expect(png.length).toBeGreaterThan(maxBytes);
		const fitted = await fitImage(png, sniff(png), maxBytes);
		expect(fitted.resized).toBe(true);
		expect(fitted.bytes.length).toBeLessThanOrEqual(maxBytes);
		expect(fitted).toMatchObject({ type: "webp", mediaType: "image/webp", ext: "webp" });
		expect(sniffImage(fitted.bytes)).toMatchObject({
			type: "webp",
			width: fitted.width,
			height: fitted.height,
		});
		expect(fitted.width).toBeLessThan(300);
		expect(Math.abs(fitted.width / fitted.height - 1.5)).toBeLessThan(0.05);
	});

	test("a WebP copy keeps transparency", async () => {
		const png = makePng(200, 200, { noise: true });
		const fitted = await fitImage(png, sniff(png), 30_000);
		// VP8X with the alpha flag, or an ALPH chunk, is how WebP carries transparency.
		const flags = fitted.bytes[20]!;
		expect(new TextDecoder().decode(fitted.bytes.subarray(12, 16))).toBe("VP8X");
		expect(flags & 0x10).toBe(0x10);
	});

	test("a JPEG over the limit stays a JPEG", async () => {
		const jpeg = await makeJpeg(400, 300, true);
		const maxBytes = Math.floor(jpeg.length / 4);
		const fitted = await fitImage(jpeg, sniff(jpeg), maxBytes);
		expect(fitted.bytes.length).toBeLessThanOrEqual(maxBytes);
		expect(fitted).toMatchObject({ type: "jpeg", mediaType: "image/jpeg", ext: "jpg", resized: true });
		expect(sniffImage(fitted.bytes)?.type).toBe("jpeg");
	});

	test.each([
		["GIF", () => makeGif(300, 200, true)],
		["BMP", () => makeBmp(300, 200)],
	])("a %s over the limit becomes a WebP", async (_, make) => {
		const bytes = make();
		const maxBytes = bytes.length - 1;
		const fitted = await fitImage(bytes, sniff(bytes), maxBytes);
		expect(fitted.bytes.length).toBeLessThanOrEqual(maxBytes);
		expect(fitted.type).toBe("webp");
	});

	test("a copy is at most 4096 px on its longest side", async () => {
		const png = makePng(5000, 40, { noise: true });
		const fitted = await fitImage(png, sniff(png), png.length - 1);
		expect(fitted.width).toBe(4096);
		expect(fitted.height).toBeLessThanOrEqual(33);
	});

	test("more pixels than the cap is refused before decoding, whatever the byte size", async () => {
		const png = makePng(20, 20);
		const error = await rejection(fitImage(png, sniff(png), 10, 399));
		expect(error.code).toBe("image-too-many-pixels");
		const claimed: SniffedImage = { ...sniff(png), width: 9000, height: 8000 };
		expect((await rejection(fitImage(png, claimed))).code).toBe("image-too-many-pixels");
	});

	test("a type this server cannot decode (AVIF, ICO) cannot be made smaller", async () => {
		const avif = makeAvif(300, 200);
		expect((await rejection(fitImage(avif, sniff(avif), 10))).code).toBe("image-not-resizable");
		const ico = makeIco(64);
		expect((await rejection(fitImage(ico, sniff(ico), 10))).code).toBe("image-not-resizable");
	});

	test("a limit nothing fits in is refused, not looped on", async () => {
		const png = makePng(50, 50, { noise: true });
		const error = await rejection(fitImage(png, sniff(png), 8));
		expect(error.code).toBe("image-not-resizable");
		expect(error.message).toEndWith(".");
	});
});

describe("thumbnail", () => {
	test("Slack's widths", () => {
		expect([...THUMBNAIL_WIDTHS]).toEqual([64, 80, 160, 360, 480, 720, 960, 1024]);
	});

	test("a PNG at ?w=360 is a 360-wide WebP", async () => {
		const thumb = await thumbnail(makePng(600, 400), 360);
		expect(thumb).toMatchObject({ type: "webp", mediaType: "image/webp", width: 360, height: 240 });
		expect(sniffImage(thumb!.bytes)).toMatchObject({ type: "webp", width: 360, height: 240 });
	});

	test("a JPEG thumbnail is a JPEG", async () => {
		const thumb = await thumbnail(await makeJpeg(800, 600), 160);
		expect(thumb).toMatchObject({ type: "jpeg", width: 160, height: 120 });
	});

	test("an image no wider than asked is served as it is", async () => {
		const gif = makeGif(100, 50);
		const thumb = await thumbnail(gif, 360);
		expect(thumb?.bytes).toBe(gif);
		expect(thumb).toMatchObject({ type: "gif", width: 100, height: 50 });
	});

	test("a width outside the set is refused", async () => {
		const error = await rejection(thumbnail(makePng(10, 10), 361));
		expect(error.code).toBe("thumbnail-width");
		expect(error.hint).toContain("360");
	});

	test("a type this server cannot decode gives no thumbnail", async () => {
		expect(await thumbnail(makeAvif(2000, 1000), 360)).toBeNull();
		expect(await thumbnail(new TextEncoder().encode("<svg/>"), 360)).toBeNull();
	});
});
