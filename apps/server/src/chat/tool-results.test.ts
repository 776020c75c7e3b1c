import { describe, expect, test } from "bun:test";
import { makeAvif, makeBmp, makeGif, makeIco, makeJpeg, makePng, makeWebp } from "../images/test-images";
import {
	decodeBase64,
	IMAGE_REFUSAL_PREFIX,
	imageRefusal,
	imageTypeOf,
	readToolError,
	readToolImages,
	refusedImageSchema,
	type ToolImagesRead,
	toolErrorLabel,
	workDetailsText,
} from "./tool-results";

const R = "[redacted]";
const failed = { isError: true };
const ok = {};
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
const envelope = (error: Record<string, unknown>) => ({ error });

describe("readToolError", () => {
	const error = {
		code: "no-repository-credential",
		kind: "NoRepositoryCredential",
		message: "No credential.",
	};

	test("the envelope on a failed, final result", () => {
		expect(readToolError(envelope(error), failed)).toEqual(error);
		expect(readToolError(envelope(error), { isError: true, preliminary: false })).toEqual(error);
	});

	test("its message keeps the spec's broad URL rule: a password holding a space or line break is masked whole", () => {
		const message = "clone failed: https://alice:hunter 2\nmore@host/o/r refused";
		expect(readToolError(envelope({ code: "clone-failed", message }), failed)?.message).toBe(
			"clone failed: https://[redacted]@host/o/r refused",
		);
		// Elsewhere in Work details the URL ends at whitespace, so a document's later lines with an @ stay whole; the
		// cost is this known limit (docs/chat.md): a credential holding whitespace is not masked there.
		expect(readToolImages({ content: [{ type: "text", text: message }] }, failed)?.texts).toEqual([message]);
	});

	test("or its JSON text", () => {
		expect(readToolError(JSON.stringify(envelope(error)), failed)).toEqual(error);
		expect(readToolError(` ${JSON.stringify(envelope(error))}\n`, failed)).toEqual(error);
	});

	test("Failed with kind, or code when there is no kind", () => {
		expect(toolErrorLabel(readToolError(envelope(error), failed)!)).toBe("NoRepositoryCredential");
		const noKind = readToolError(envelope({ code: "E42", message: "m" }), failed)!;
		expect(noKind).toEqual({ code: "E42", message: "m" });
		expect("kind" in noKind).toBe(false);
		expect(toolErrorLabel(noKind)).toBe("E42");
	});

	test("only on a failed, final result", () => {
		expect(readToolError(envelope(error), ok)).toBeNull();
		expect(readToolError(envelope(error), { isError: false })).toBeNull();
		expect(readToolError(envelope(error), { isError: true, preliminary: true })).toBeNull();
		expect(readToolError(envelope(error), { preliminary: true })).toBeNull();
	});

	test("exactly these fields, at both levels", () => {
		expect(readToolError({ ...envelope(error), extra: 1 }, failed)).toBeNull();
		expect(readToolError(envelope({ ...error, hint: "x" }), failed)).toBeNull();
		expect(readToolError(envelope({ kind: "K", message: "m" }), failed)).toBeNull();
		expect(readToolError(envelope({ code: "c" }), failed)).toBeNull();
		expect(readToolError({ error: "plain message" }, failed)).toBeNull();
		expect(readToolError([envelope(error)], failed)).toBeNull();
		expect(readToolError("not json", failed)).toBeNull();
		expect(readToolError(null, failed)).toBeNull();
	});

	test.each([
		["a", true],
		["0", true],
		["9lives", true],
		["a.b_c-D", true],
		["x".repeat(128), true],
		["x".repeat(129), false],
		["", false],
		["-leading", false],
		[".leading", false],
		["has space", false],
		["a:b", false],
		["a=b", false],
		['a"b', false],
		["café", false],
	])("code and kind %j valid: %s", (identifier, valid) => {
		const asCode = readToolError(envelope({ code: identifier, message: "m" }), failed);
		const asKind = readToolError(envelope({ code: "c", kind: identifier, message: "m" }), failed);
		expect(asCode !== null).toBe(valid);
		expect(asKind !== null).toBe(valid);
	});

	test("kind must be a string when present", () => {
		expect(readToolError(envelope({ code: "c", kind: null, message: "m" }), failed)).toBeNull();
		expect(readToolError(envelope({ code: "c", kind: 3, message: "m" }), failed)).toBeNull();
	});

	test("message is 1 to 4000 characters, counted as code points", () => {
		expect(readToolError(envelope({ code: "c", message: "" }), failed)).toBeNull();
		expect(readToolError(envelope({ code: "c", message: "x".repeat(4000) }), failed)).not.toBeNull();
		expect(readToolError(envelope({ code: "c", message: "x".repeat(4001) }), failed)).toBeNull();
		expect(readToolError(envelope({ code: "c", message: "😀".repeat(4000) }), failed)).not.toBeNull();
		expect(readToolError(envelope({ code: "c", message: "😀".repeat(4001) }), failed)).toBeNull();
		expect(readToolError(envelope({ code: "c", message: 42 }), failed)).toBeNull();
	});

	test("message is masked, as plain text even when it holds JSON", () => {
		const message = 'clone of https://alice:hunter2@github.com/o/r failed: {"token":"abc"}';
		expect(readToolError(envelope({ code: "clone-failed", message }), failed)?.message).toBe(
			`clone of https://${R}@github.com/o/r failed: {"token":"${R}"}`,
		);
	});

	test("an envelope whose code or kind masking would change is not recognised", () => {
		const token = `ghp_${"f".repeat(36)}`;
		expect(readToolError(envelope({ code: token, message: "m" }), failed)).toBeNull();
		expect(readToolError(envelope({ code: "c", kind: token, message: "m" }), failed)).toBeNull();
		expect(readToolError(envelope({ code: "xoxb-1234-abcd", message: "m" }), failed)).toBeNull();
	});
});

const png = makePng(30, 20);
const image = (bytes: Uint8Array, mimeType: string, extra: Record<string, unknown> = {}) => ({
	type: "image",
	data: b64(bytes),
	mimeType,
	...extra,
});
const svg = { type: "image", data: b64(new TextEncoder().encode("<svg/>")), mimeType: "image/svg+xml" };

function read(content: unknown[], state = ok): ToolImagesRead {
	const result = readToolImages({ content }, state);
	if (!result) throw new Error("expected a content result");
	return result;
}

describe("readToolImages", () => {
	test("text blocks and a PNG, decoded and verified", () => {
		const result = read([
			{ type: "text", text: "Here it is" },
			image(png, "image/png", { alt: "A chart", caption: "" }),
		]);
		expect(result.texts).toEqual(["Here it is"]);
		expect(result.imageCount).toBe(1);
		expect(result.refused).toEqual([]);
		expect(result.images).toHaveLength(1);
		const [shown] = result.images;
		expect(shown!.bytes).toEqual(png);
		expect(shown).toMatchObject({ block: 1, alt: "A chart", caption: "" });
		expect(shown!.sniffed).toMatchObject({ type: "png", mediaType: "image/png", width: 30, height: 20 });
	});

	test("the JSON text of the same object is read the same way", () => {
		const content = [{ type: "text", text: "t" }, image(png, "image/png")];
		expect(readToolImages(JSON.stringify({ content }), ok)).toEqual(read(content));
	});

	test.each([
		["image/png", () => makePng(8, 8), "png"],
		["image/jpeg", () => makeJpeg(8, 8), "jpeg"],
		["image/webp", () => makeWebp(8, 8), "webp"],
		["image/gif", () => makeGif(8, 8), "gif"],
		["image/avif", () => makeAvif(8, 8), "avif"],
		["image/bmp", () => makeBmp(8, 8), "bmp"],
		["image/x-icon", () => makeIco(16), "ico"],
		["image/jpg", () => makeJpeg(8, 8), "jpeg"],
		["image/apng", () => makePng(8, 8), "png"],
		["image/x-ms-bmp", () => makeBmp(8, 8), "bmp"],
		["image/vnd.microsoft.icon", () => makeIco(16), "ico"],
		["IMAGE/PNG", () => makePng(8, 8), "png"],
		["image/png; charset=binary", () => makePng(8, 8), "png"],
	])("%s is hosted as the type its bytes are", async (mimeType, make, type) => {
		const result = read([image(await make(), mimeType)]);
		expect(result.refused).toEqual([]);
		expect(result.images[0]?.sniffed.type).toBe(type as never);
	});

	test("imageTypeOf names only hosted types", () => {
		expect(imageTypeOf("image/svg+xml")).toBeNull();
		expect(imageTypeOf("text/html")).toBeNull();
		expect(imageTypeOf("image/heic")).toBeNull();
		expect(imageTypeOf("constructor")).toBeNull();
		expect(imageTypeOf(" image/GIF ")).toBe("gif");
	});

	test("base64 with or without its padding", () => {
		const bytes = makePng(2, 2);
		expect(bytes.length % 3).not.toBe(0);
		const padded = b64(bytes);
		expect(padded).toEndWith("=");
		for (const data of [padded, padded.replace(/=+$/, "")]) {
			expect(read([{ type: "image", data, mimeType: "image/png" }]).images).toHaveLength(1);
		}
	});

	test("decodeBase64 takes standard base64 only", () => {
		expect(decodeBase64("QUJD")).toEqual(new Uint8Array([65, 66, 67]));
		expect(decodeBase64("QUI=")).toEqual(new Uint8Array([65, 66]));
		expect(decodeBase64("QUI")).toEqual(new Uint8Array([65, 66]));
		expect(decodeBase64("QQ==")).toEqual(new Uint8Array([65]));
		expect(decodeBase64("QQ")).toEqual(new Uint8Array([65]));
		for (const bad of ["Q", "QUI==", "QQ=", "QU JD", "QUJD\n", "-_-_", "QUJD===", "", "=", "Q$JD"]) {
			expect(decodeBase64(bad)).toBeNull();
		}
	});

	test("extra keys are ignored, and so is an alt or caption that is no string", () => {
		const result = read([image(png, "image/png", { alt: 3, caption: { x: 1 }, annotations: {}, _meta: 1 })]);
		expect(result.images).toHaveLength(1);
		expect("alt" in result.images[0]!).toBe(false);
		expect("caption" in result.images[0]!).toBe(false);
	});

	test("text blocks are masked; other blocks are ignored", () => {
		const result = read([
			{ type: "text", text: "pushed with https://alice:hunter2@github.com/o/r" },
			{ type: "text", text: 42 },
			{ type: "audio", data: "AAAA", mimeType: "audio/wav" },
			{ type: "resource", resource: {} },
			"loose string",
		]);
		expect(result.texts).toEqual([`pushed with https://${R}@github.com/o/r`]);
		expect(result.imageCount).toBe(0);
	});

	test("no content array is no content result", () => {
		expect(readToolImages({ result: "x" }, ok)).toBeNull();
		expect(readToolImages({ content: "x" }, ok)).toBeNull();
		expect(readToolImages("not json", ok)).toBeNull();
		expect(readToolImages(null, ok)).toBeNull();
	});
});

describe("readToolImages: reasons an image couldn't be shown", () => {
	const reasonFor = (block: unknown) => {
		const result = read([block]);
		expect(result.images).toEqual([]);
		expect(result.refused).toHaveLength(1);
		expect(result.refused[0]!.reason.startsWith(IMAGE_REFUSAL_PREFIX)).toBe(true);
		return result.refused[0]!.reason;
	};

	test("its type is not one Chat shows", () => {
		expect(reasonFor(svg)).toBe("Image couldn't be shown: its type, image/svg+xml, is not one Chat shows.");
		expect(reasonFor(image(png, "text/html"))).toBe(
			"Image couldn't be shown: its type, text/html, is not one Chat shows.",
		);
		expect(reasonFor(image(png, "a very odd type"))).toBe(
			"Image couldn't be shown: its type is not one Chat shows.",
		);
	});

	test("its data is not base64", () => {
		expect(reasonFor({ type: "image", data: "not base64!", mimeType: "image/png" })).toBe(
			imageRefusal.notBase64,
		);
		expect(reasonFor({ type: "image", data: `${b64(png)}\n`, mimeType: "image/png" })).toBe(
			imageRefusal.notBase64,
		);
	});

	test("its bytes are not the type it names", () => {
		const text = new TextEncoder().encode("just text");
		expect(reasonFor(image(text, "image/png"))).toBe(
			"Image couldn't be shown: its bytes are not a PNG image.",
		);
		const svgBytes = new TextEncoder().encode("<svg xmlns='http://www.w3.org/2000/svg'/>");
		expect(reasonFor(image(svgBytes, "image/png"))).toBe(imageRefusal.notTheType("png"));
	});

	test("its bytes are another type", () => {
		expect(reasonFor(image(makeGif(4, 4), "image/png"))).toBe(
			"Image couldn't be shown: its bytes are a GIF image, not the PNG its type names.",
		);
		expect(reasonFor(image(png, "image/jpg"))).toBe(imageRefusal.anotherType("jpeg", "png"));
	});

	test("its bytes are cut short", () => {
		expect(reasonFor(image(png.subarray(0, png.length - 12), "image/png"))).toBe(
			"Image couldn't be shown: its PNG bytes are cut short.",
		);
	});

	test("its block has no data or type", () => {
		for (const block of [
			{ type: "image", mimeType: "image/png" },
			{ type: "image", data: b64(png) },
			{ type: "image", data: "", mimeType: "image/png" },
			{ type: "image", data: b64(png), mimeType: "" },
			{ type: "image", data: 42, mimeType: "image/png" },
			{ type: "image", data: b64(png), mimeType: ["image/png"] },
		]) {
			expect(reasonFor(block)).toBe("Image couldn't be shown: its block has no data or type.");
		}
	});

	test("it did not fit one message: a block with tooLarge is never stored", () => {
		expect(reasonFor({ type: "image", data: "", mimeType: "image/png", tooLarge: 3_500_000 })).toBe(
			"Image couldn't be shown: it did not fit in one message (3.3 MB).",
		);
		expect(reasonFor(image(png, "image/png", { tooLarge: 5 * 1024 * 1024 }))).toBe(
			"Image couldn't be shown: it did not fit in one message (5 MB).",
		);
		expect(reasonFor(image(png, "image/png", { tooLarge: true }))).toBe(
			"Image couldn't be shown: it did not fit in one message.",
		);
	});

	test("one entry per refused block in block order, duplicates kept, each with the images before it", () => {
		const result = read([
			svg,
			image(png, "image/png"),
			{ type: "text", text: "between" },
			svg,
			svg,
			image(makeGif(2, 2), "image/gif"),
			{ type: "image" },
		]);
		expect(result.imageCount).toBe(6);
		expect(result.images.map((i) => i.block)).toEqual([1, 5]);
		expect(result.refused.map(({ block, before }) => [block, before])).toEqual([
			[0, 0],
			[3, 1],
			[4, 1],
			[6, 2],
		]);
	});

	test("a preliminary or failed result shows no images and no reasons, but keeps its texts and count", () => {
		const content = [{ type: "text", text: "partial" }, image(png, "image/png"), svg];
		for (const state of [{ preliminary: true }, { isError: true }, { isError: true, preliminary: true }]) {
			const result = read(content, state);
			expect(result).toEqual({ texts: ["partial"], imageCount: 2, images: [], refused: [] });
		}
	});
});

describe("workDetailsText", () => {
	test("the text blocks and how many images, never their bytes", () => {
		const result = read([{ type: "text", text: "Made two" }, image(png, "image/png"), svg]);
		const text = workDetailsText(result);
		expect(text).toBe("Made two\n\n2 images");
		expect(text).not.toContain(b64(png).slice(0, 16));
		expect(workDetailsText(read([image(png, "image/png")]))).toBe("1 image");
		expect(workDetailsText(read([{ type: "text", text: "only text" }]))).toBe("only text");
	});
});

describe("refusedImageSchema", () => {
	test("a saved entry is valid with either sentence", () => {
		expect(refusedImageSchema.safeParse({ before: 0, reason: imageRefusal.couldNotStore }).success).toBe(
			true,
		);
		expect(
			refusedImageSchema.safeParse({ before: 2, reason: "Image too large to show (12.5 MB, limit 10 MB)" })
				.success,
		).toBe(true);
		expect(refusedImageSchema.safeParse({ before: 0, reason: "Something else" }).success).toBe(false);
		expect(refusedImageSchema.safeParse({ before: -1, reason: imageRefusal.couldNotStore }).success).toBe(
			false,
		);
		expect(refusedImageSchema.safeParse({ before: 0, reason: imageRefusal.notBase64, x: 1 }).success).toBe(
			false,
		);
	});
});
