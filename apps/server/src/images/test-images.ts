// Real image bytes for tests: PNGs built by hand (so a test can pick size, alpha and noise), JPEG and
// WebP re-encoded from them with Bun.Image, and minimal GIF, BMP, ICO and AVIF files built by hand.
import { deflateSync } from "node:zlib";

const encoder = new TextEncoder();

function concat(parts: Uint8Array[]): Uint8Array {
	const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
	let at = 0;
	for (const part of parts) {
		out.set(part, at);
		at += part.length;
	}
	return out;
}

function pngChunk(type: string, data: Uint8Array): Uint8Array {
	const out = new Uint8Array(12 + data.length);
	const view = new DataView(out.buffer);
	view.setUint32(0, data.length);
	out.set(encoder.encode(type), 4);
	out.set(data, 8);
	view.setUint32(8 + data.length, Bun.hash.crc32(out.subarray(4, 8 + data.length)));
	return out;
}

export type PngOptions = { alpha?: boolean; noise?: boolean };

/** An 8-bit RGB(A) PNG: a gradient, or noise that barely compresses (to make big files from few pixels). */
export function makePng(width: number, height: number, { alpha = true, noise = false }: PngOptions = {}) {
	const channels = alpha ? 4 : 3;
	const stride = width * channels + 1;
	const raw = new Uint8Array(stride * height);
	let seed = 0x2545f491;
	for (let y = 0; y < height; y++) {
		for (let x = 0; x < width; x++) {
			const at = y * stride + 1 + x * channels;
			for (let c = 0; c < channels; c++) {
				if (noise) {
					seed ^= seed << 13;
					seed ^= seed >>> 17;
					seed ^= seed << 5;
					raw[at + c] = seed & 0xff;
				} else {
					raw[at + c] = c === 0 ? x & 0xff : c === 1 ? y & 0xff : c === 2 ? 128 : 200;
				}
			}
		}
	}
	const header = new Uint8Array(13);
	const view = new DataView(header.buffer);
	view.setUint32(0, width);
	view.setUint32(4, height);
	header[8] = 8;
	header[9] = alpha ? 6 : 2;
	return concat([
		new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
		pngChunk("IHDR", header),
		pngChunk("IDAT", new Uint8Array(deflateSync(raw))),
		pngChunk("IEND", new Uint8Array()),
	]);
}

export async function makeJpeg(width: number, height: number, noise = false): Promise<Uint8Array> {
	return new Bun.Image(makePng(width, height, { alpha: false, noise })).jpeg({ quality: 90 }).bytes();
}

export async function makeWebp(width: number, height: number, lossless = false): Promise<Uint8Array> {
	return new Bun.Image(makePng(width, height)).webp(lossless ? { lossless: true } : {}).bytes();
}

/**
 * A one-frame GIF89a with a 128-colour table and "uncompressed" LZW: 8-bit literal codes with a clear
 * code every 100 pixels, so the code width never grows and the file is about one byte per pixel.
 */
export function makeGif(width: number, height: number, noise = false): Uint8Array {
	const head = new Uint8Array(13);
	head.set(encoder.encode("GIF89a"));
	new DataView(head.buffer).setUint16(6, width, true);
	new DataView(head.buffer).setUint16(8, height, true);
	head[10] = 0x80 | 6; // global colour table of 2^(6+1) = 128 entries
	const palette = new Uint8Array(128 * 3).map((_, i) => (i * 37) & 0xff);
	const descriptor = new Uint8Array(10);
	descriptor[0] = 0x2c;
	new DataView(descriptor.buffer).setUint16(5, width, true);
	new DataView(descriptor.buffer).setUint16(7, height, true);
	const codes: number[] = [];
	let seed = 0x1234567;
	for (let i = 0; i < width * height; i++) {
		if (i % 100 === 0) codes.push(128); // clear
		seed = (seed * 1103515245 + 12345) >>> 0;
		codes.push(noise ? (seed >>> 16) & 0x7f : (i >> 4) & 0x7f);
	}
	codes.push(129); // end of information
	const blocks: number[] = [7]; // LZW minimum code size
	for (let at = 0; at < codes.length; at += 255) {
		const chunk = codes.slice(at, at + 255);
		blocks.push(chunk.length, ...chunk);
	}
	blocks.push(0);
	return concat([head, palette, descriptor, new Uint8Array(blocks), new Uint8Array([0x3b])]);
}

/** A 24-bit bottom-up BMP with a BITMAPINFOHEADER. */
export function makeBmp(width: number, height: number): Uint8Array {
	const row = Math.ceil((width * 3) / 4) * 4;
	const size = 54 + row * height;
	const out = new Uint8Array(size);
	const view = new DataView(out.buffer);
	out.set(encoder.encode("BM"));
	view.setUint32(2, size, true);
	view.setUint32(10, 54, true);
	view.setUint32(14, 40, true);
	view.setInt32(18, width, true);
	view.setInt32(22, height, true);
	view.setUint16(26, 1, true);
	view.setUint16(28, 24, true);
	view.setUint32(34, row * height, true);
	for (let i = 54; i < size; i++) out[i] = i & 0xff;
	return out;
}

/** An ICO with one entry holding a PNG, as modern icons do. */
export function makeIco(side: number): Uint8Array {
	const png = makePng(side, side);
	const head = new Uint8Array(22);
	const view = new DataView(head.buffer);
	view.setUint16(2, 1, true);
	view.setUint16(4, 1, true);
	head[6] = side >= 256 ? 0 : side;
	head[7] = side >= 256 ? 0 : side;
	view.setUint16(10, 1, true);
	view.setUint16(12, 32, true);
	view.setUint32(14, png.length, true);
	view.setUint32(18, 22, true);
	return concat([head, png]);
}

function box(type: string, ...body: Uint8Array[]): Uint8Array {
	const content = concat(body);
	const head = new Uint8Array(8);
	new DataView(head.buffer).setUint32(0, 8 + content.length);
	head.set(encoder.encode(type), 4);
	return concat([head, content]);
}

/** The box structure of an AVIF (ftyp, meta with an ispe, mdat); the payload is not real AV1. */
export function makeAvif(width: number, height: number, payloadBytes = 64): Uint8Array {
	const ispe = new Uint8Array(12);
	new DataView(ispe.buffer).setUint32(4, width);
	new DataView(ispe.buffer).setUint32(8, height);
	const ftyp = box("ftyp", encoder.encode("avif"), new Uint8Array(4), encoder.encode("avifmif1miaf"));
	const meta = box("meta", new Uint8Array(4), box("iprp", box("ipco", box("ispe", ispe))));
	return concat([ftyp, meta, box("mdat", new Uint8Array(payloadBytes).fill(7))]);
}
