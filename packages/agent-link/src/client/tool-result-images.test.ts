/** fitToolResultImages with the real Bun.Image shrinker and with none (as on Node). */
import { describe, expect, test } from "bun:test";
import { encodeClientMessage } from "../encode";
import { MAX_FRAME_BYTES } from "../limits";
import type { Part } from "../schemas/client-messages";
import { utf8ByteLength } from "../text";
import { bunImageShrinker } from "./bun-image";
import { noisePng, toBase64 } from "./contract/noise-png";
import { fitToolResultImages } from "./tool-result-images";

const image = (width: number, height: number, seed?: number) => ({
	type: "image",
	data: toBase64(noisePng(width, height, seed)),
	mimeType: "image/png",
	alt: "noise",
	extra: "kept",
});

function part(result: unknown): Part {
	return {
		type: "part",
		session: "s1",
		turn: "t1",
		part: { type: "tool-result", toolCallId: "c1", toolName: "make_image", result: result as never },
	};
}

const blocks = (fitted: Part | null) => {
	if (!fitted) throw new Error("Nothing was fitted.");
	const result = (fitted.part as { result: unknown }).result;
	return (typeof result === "string" ? JSON.parse(result) : result).content as Record<string, unknown>[];
};
/** Decoding and encoding megapixels is slow on a busy machine. */
const IMAGE_TIMEOUT_MS = 30_000;

const size = (message: Part) => utf8ByteLength(JSON.stringify(message));

describe("without a shrinker (Node)", () => {
	test(
		"the largest image is left out with tooLarge, extra keys kept, and the input untouched",
		async () => {
			const small = image(300, 200, 1);
			const large = image(700, 500, 2);
			const message = part({ content: [{ type: "text", text: "two" }, large, small] });
			const before = JSON.stringify(message);
			const fitted = await fitToolResultImages(message, null);
			expect(JSON.stringify(message)).toBe(before);
			const [, first, second] = blocks(fitted);
			expect(first).toEqual({ ...large, data: "", tooLarge: noisePng(700, 500, 2).length });
			expect(second).toEqual(small);
			expect(size(fitted!)).toBeLessThanOrEqual(MAX_FRAME_BYTES);
		},
		IMAGE_TIMEOUT_MS,
	);

	test(
		"a result given as JSON text is fitted and stays JSON text",
		async () => {
			// Two equal images: the later goes first.
			const message = part(JSON.stringify({ content: [image(700, 500), image(700, 500)] }));
			const fitted = await fitToolResultImages(message, null);
			expect(typeof (fitted!.part as { result: unknown }).result).toBe("string");
			expect(blocks(fitted).map((block) => block.tooLarge !== undefined)).toEqual([false, true]);
			expect(() => encodeClientMessage(fitted!)).not.toThrow();
		},
		IMAGE_TIMEOUT_MS,
	);

	test(
		"a result with no image, or no content array, is not fitted",
		async () => {
			expect(
				await fitToolResultImages(part({ content: [{ type: "text", text: "x".repeat(10) }] }), null),
			).toBeNull();
			expect(await fitToolResultImages(part("not json"), null)).toBeNull();
			expect(await fitToolResultImages(part({ output: 1 }), null)).toBeNull();
		},
		IMAGE_TIMEOUT_MS,
	);
});

describe("with Bun.Image", () => {
	const shrink = bunImageShrinker();

	test(
		"is available in Bun",
		() => {
			expect(shrink).not.toBeNull();
		},
		IMAGE_TIMEOUT_MS,
	);

	test(
		"the image that does not fit becomes a smaller WebP copy that fits what is left",
		async () => {
			const other = image(500, 400, 3);
			const message = part({ content: [image(900, 700, 4), other] });
			const fitted = await fitToolResultImages(message, shrink);
			const [copy, kept] = blocks(fitted);
			expect(copy).toMatchObject({ mimeType: "image/webp", alt: "noise", extra: "kept" });
			expect(copy!.tooLarge).toBeUndefined();
			expect(kept).toEqual(other);
			expect(size(fitted!)).toBeLessThanOrEqual(MAX_FRAME_BYTES);
			const metadata = await new Bun.Image(Buffer.from(copy!.data as string, "base64")).metadata();
			expect(metadata.format).toBe("webp");
		},
		IMAGE_TIMEOUT_MS,
	);

	test(
		"a JPEG stays a JPEG",
		async () => {
			const jpeg = await new Bun.Image(noisePng(1250, 950)).jpeg({ quality: 100 }).bytes();
			expect(jpeg.length).toBeGreaterThan(MAX_FRAME_BYTES);
			const fitted = await fitToolResultImages(
				part({ content: [{ type: "image", data: toBase64(jpeg), mimeType: "image/jpeg" }] }),
				shrink,
			);
			expect(blocks(fitted)[0]).toMatchObject({ mimeType: "image/jpeg" });
			expect(size(fitted!)).toBeLessThanOrEqual(MAX_FRAME_BYTES);
		},
		IMAGE_TIMEOUT_MS,
	);

	test(
		"bytes that do not decode get tooLarge",
		async () => {
			const garbage = toBase64(new Uint8Array(2_000_000).fill(7));
			const fitted = await fitToolResultImages(
				part({ content: [{ type: "image", data: garbage, mimeType: "image/png" }] }),
				shrink,
			);
			expect(blocks(fitted)[0]).toEqual({
				type: "image",
				data: "",
				mimeType: "image/png",
				tooLarge: 2_000_000,
			});
		},
		IMAGE_TIMEOUT_MS,
	);
});
