import { describe, expect, test } from "bun:test";
import { makeAvif, makeGif, makePng } from "../images/test-images";
import { storeToolImages } from "./tool-image-store";
import { imageRefusal, readToolImages, type ToolImagesRead } from "./tool-results";

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
const png = makePng(30, 20);
const image = (bytes: Uint8Array, mimeType: string, extra: Record<string, unknown> = {}) => ({
	type: "image",
	data: b64(bytes),
	mimeType,
	...extra,
});
const svg = { type: "image", data: b64(new TextEncoder().encode("<svg/>")), mimeType: "image/svg+xml" };

function read(content: unknown[]): ToolImagesRead {
	const result = readToolImages({ content }, {});
	if (!result) throw new Error("expected a content result");
	return result;
}

describe("storeToolImages", () => {
	type Stored = { name: string; type: string; bytes: number; resized: boolean; alt?: string };

	function memoryStore(failOn?: string) {
		const stored: Stored[] = [];
		return {
			stored,
			store: async (img: { type: string; bytes: Uint8Array; resized: boolean; alt?: string }) => {
				if (failOn && img.alt === failOn) throw new Error("disk full at /var/secret/path");
				const entry = {
					name: `img-${stored.length}`,
					type: img.type,
					bytes: img.bytes.length,
					resized: img.resized,
					alt: img.alt,
				};
				stored.push(entry);
				return entry;
			},
		};
	}

	test("stores images in order; before counts the message's earlier images", async () => {
		const store = memoryStore();
		const result = read([
			svg,
			image(png, "image/png", { alt: "one" }),
			svg,
			image(makeGif(4, 4), "image/gif", { alt: "two" }),
		]);
		const out = await storeToolImages(result, { imagesOnMessage: 3, store: store.store });
		expect(out.stored.map((s) => s.alt)).toEqual(["one", "two"]);
		expect(out.stored[0]).toMatchObject({ type: "png", resized: false, bytes: png.length });
		expect(out.refused).toEqual([
			{ before: 3, reason: imageRefusal.typeNotShown("image/svg+xml") },
			{ before: 4, reason: imageRefusal.typeNotShown("image/svg+xml") },
		]);
	});

	test("an image over maxBytes is stored as a smaller copy under it", async () => {
		const store = memoryStore();
		const big = makePng(200, 150, { noise: true });
		const out = await storeToolImages(read([image(big, "image/png")]), {
			imagesOnMessage: 0,
			store: store.store,
			maxBytes: 20_000,
		});
		expect(out.refused).toEqual([]);
		expect(out.stored[0]).toMatchObject({ type: "webp", resized: true });
		expect(out.stored[0]!.bytes).toBeLessThanOrEqual(20_000);
	});

	test("more pixels than Chopin can make smaller, and a store that fails, say so without detail", async () => {
		const store = memoryStore("broken");
		const result = read([
			image(makePng(40, 40), "image/png", { alt: "huge" }),
			image(png, "image/png", { alt: "broken" }),
			image(png, "image/png", { alt: "fine" }),
			image(makeAvif(30, 30, 5000), "image/avif", { alt: "avif over the limit" }),
			svg,
		]);
		const out = await storeToolImages(result, {
			imagesOnMessage: 0,
			store: store.store,
			maxPixels: 1000,
			maxBytes: 2000,
		});
		expect(out.stored.map((s) => s.alt)).toEqual(["fine"]);
		expect(out.refused).toEqual([
			{ before: 0, reason: imageRefusal.tooManyPixels },
			{ before: 0, reason: "Image couldn't be shown: Chopin could not store it." },
			{ before: 1, reason: imageRefusal.couldNotStore },
			{ before: 1, reason: imageRefusal.typeNotShown("image/svg+xml") },
		]);
		expect(JSON.stringify(out.refused)).not.toContain("disk full");
	});
});
