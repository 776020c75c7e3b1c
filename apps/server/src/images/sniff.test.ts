import { describe, expect, test } from "bun:test";
import { sniffImage } from "./sniff";
import { makeAvif, makeBmp, makeGif, makeIco, makeJpeg, makePng, makeWebp } from "./test-images";

const text = (s: string) => new TextEncoder().encode(s);
const concat = (...parts: Uint8Array[]) => {
	const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
	let at = 0;
	for (const p of parts) {
		out.set(p, at);
		at += p.length;
	}
	return out;
};

describe("sniffImage: each hosted type from its own bytes", () => {
	test.each([
		["png", "image/png", "png", () => makePng(30, 20)],
		["jpeg", "image/jpeg", "jpg", () => makeJpeg(30, 20)],
		["webp", "image/webp", "webp", () => makeWebp(30, 20)],
		["webp", "image/webp", "webp", () => makeWebp(30, 20, true)],
		["gif", "image/gif", "gif", () => makeGif(30, 20)],
		["bmp", "image/bmp", "bmp", () => makeBmp(30, 20)],
		["avif", "image/avif", "avif", () => makeAvif(30, 20)],
	] as const)("%s", async (type, mediaType, ext, make) => {
		expect(sniffImage(await make())).toEqual({
			type,
			mediaType,
			ext,
			width: 30,
			height: 20,
			truncated: false,
		});
	});

	test("a lossy WebP without alpha (VP8 chunk)", async () => {
		const webp = await new Bun.Image(makePng(30, 20, { alpha: false })).webp().bytes();
		expect(new TextDecoder().decode(webp.subarray(12, 16))).toBe("VP8 ");
		expect(sniffImage(webp)).toMatchObject({ type: "webp", width: 30, height: 20, truncated: false });
	});

	test("an ICO holding a PNG, and one holding a DIB, size from its largest entry", () => {
		expect(sniffImage(makeIco(32))).toEqual({
			type: "ico",
			mediaType: "image/x-icon",
			ext: "ico",
			width: 32,
			height: 32,
			truncated: false,
		});
		const dibIco = makeIco(16);
		const dib = makeBmp(16, 32).subarray(14); // a DIB is a BMP without its file header
		const head = dibIco.subarray(0, 22).slice();
		new DataView(head.buffer).setUint32(14, dib.length, true);
		expect(sniffImage(concat(head, dib))).toMatchObject({
			type: "ico",
			width: 16,
			height: 16,
			truncated: false,
		});
	});

	test("a 256-pixel icon entry writes its size as 0", () => {
		expect(sniffImage(makeIco(256))).toMatchObject({ type: "ico", width: 256, height: 256 });
	});

	test("an APNG is a PNG", () => {
		const png = makePng(8, 8);
		const actl = new Uint8Array([0, 0, 0, 8, 0x61, 0x63, 0x54, 0x4c, 0, 0, 0, 1, 0, 0, 0, 0, 1, 2, 3, 4]);
		const apng = concat(png.subarray(0, 33), actl, png.subarray(33));
		expect(sniffImage(apng)).toMatchObject({ type: "png", width: 8, height: 8, truncated: false });
	});

	test("a top-down BMP (negative height)", () => {
		const bmp = makeBmp(5, 7);
		new DataView(bmp.buffer).setInt32(22, -7, true);
		expect(sniffImage(bmp)).toMatchObject({ type: "bmp", width: 5, height: 7, truncated: false });
	});

	test("an AVIF named only among the compatible brands", () => {
		const avif = makeAvif(10, 12);
		avif.set(text("mif1"), 8);
		expect(sniffImage(avif)).toMatchObject({ type: "avif", width: 10, height: 12 });
	});
});

describe("sniffImage: bytes cut short", () => {
	test("PNG without IEND, and cut inside its header", () => {
		const png = makePng(30, 20);
		expect(sniffImage(png.subarray(0, png.length - 12))).toMatchObject({
			type: "png",
			truncated: true,
			width: 30,
		});
		expect(sniffImage(png.subarray(0, 20))).toEqual({
			type: "png",
			mediaType: "image/png",
			ext: "png",
			truncated: true,
		});
	});

	test("JPEG cut in its scan data, or just before EOI", async () => {
		const jpeg = await makeJpeg(40, 40, true);
		expect(sniffImage(jpeg.subarray(0, jpeg.length >> 1))).toMatchObject({ type: "jpeg", truncated: true });
		expect(sniffImage(jpeg.subarray(0, jpeg.length - 2))).toMatchObject({ type: "jpeg", truncated: true });
	});

	test("a JPEG whose EXIF thumbnail is whole but whose own image is cut", async () => {
		const inner = await makeJpeg(4, 4);
		const app1 = concat(
			new Uint8Array([0xff, 0xe1, (inner.length + 2) >> 8, (inner.length + 2) & 0xff]),
			inner,
		);
		const outer = await makeJpeg(40, 30, true);
		const withThumb = concat(outer.subarray(0, 2), app1, outer.subarray(2));
		expect(sniffImage(withThumb)).toMatchObject({ width: 40, height: 30, truncated: false });
		expect(sniffImage(withThumb.subarray(0, 2 + app1.length + 200))).toMatchObject({ truncated: true });
	});

	test("JPEG and GIF with bytes after their end are whole", async () => {
		expect(sniffImage(concat(await makeJpeg(8, 8), text("trailer")))).toMatchObject({ truncated: false });
		const gif = makeGif(8, 8);
		expect(sniffImage(concat(gif.subarray(0, gif.length - 1), text("junk")))).toMatchObject({
			truncated: false,
		});
	});

	test("GIF without its trailer, or cut inside a frame", () => {
		const gif = makeGif(8, 8);
		expect(sniffImage(gif.subarray(0, gif.length - 1))).toMatchObject({ type: "gif", truncated: true });
		expect(sniffImage(gif.subarray(0, 25))).toMatchObject({ type: "gif", truncated: true, width: 8 });
	});

	test("WebP shorter than its RIFF size", async () => {
		const webp = await makeWebp(30, 20);
		expect(sniffImage(webp.subarray(0, webp.length - 1))).toMatchObject({ type: "webp", truncated: true });
	});

	test("BMP missing pixel rows", () => {
		const bmp = makeBmp(30, 20);
		expect(sniffImage(bmp.subarray(0, bmp.length - 1))).toMatchObject({ type: "bmp", truncated: true });
		expect(sniffImage(bmp.subarray(0, 30))).toMatchObject({ type: "bmp", truncated: true });
	});

	test("ICO whose entry runs past the end, or whose directory is cut", () => {
		const ico = makeIco(16);
		expect(sniffImage(ico.subarray(0, ico.length - 1))).toMatchObject({ type: "ico", truncated: true });
		expect(sniffImage(ico.subarray(0, 12))).toMatchObject({ type: "ico", truncated: true });
	});

	test("AVIF cut inside its mdat, or before it", () => {
		const avif = makeAvif(30, 20);
		expect(sniffImage(avif.subarray(0, avif.length - 1))).toMatchObject({ type: "avif", truncated: true });
		expect(sniffImage(avif.subarray(0, avif.length - 72))).toMatchObject({ type: "avif", truncated: true });
	});
});

describe("sniffImage: not an image Chat hosts", () => {
	test.each([
		["SVG", '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'],
		["SVG with an XML declaration", '<?xml version="1.0"?><svg/>'],
		["HTML", "<!doctype html><title>x</title>"],
		["plain text", "hello"],
		["nothing", ""],
		["HEIC", "\0\0\0\x18ftypheic\0\0\0\0mif1heic"],
		["a PNG signature cut short", "\x89PN"],
	])("%s", (_, body) => {
		const bytes = Uint8Array.from(body, (c) => c.charCodeAt(0));
		expect(sniffImage(bytes)).toBeNull();
	});

	test("a cursor (CUR) and a directory of nonsense are no ICO", () => {
		const cur = makeIco(16);
		cur[2] = 2;
		expect(sniffImage(cur)).toBeNull();
		const junk = makeIco(16);
		junk.fill(0x41, 22);
		expect(sniffImage(junk)).toBeNull();
	});

	test("BM followed by no known DIB header is no BMP", () => {
		expect(sniffImage(text("BM and then some words that are not a header"))).toBeNull();
	});
});
