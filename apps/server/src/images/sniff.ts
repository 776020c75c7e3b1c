// Tells what raster image some bytes are from their own headers (never a name or a claimed type), with
// their size and whether they are cut short, so Chat hosts only images a browser draws as what they are.

/** The image types Chat hosts. SVG, HTML and everything else is not one. */
export const IMAGE_TYPES = {
	png: { mediaType: "image/png", ext: "png", label: "PNG" },
	jpeg: { mediaType: "image/jpeg", ext: "jpg", label: "JPEG" },
	webp: { mediaType: "image/webp", ext: "webp", label: "WebP" },
	gif: { mediaType: "image/gif", ext: "gif", label: "GIF" },
	avif: { mediaType: "image/avif", ext: "avif", label: "AVIF" },
	bmp: { mediaType: "image/bmp", ext: "bmp", label: "BMP" },
	ico: { mediaType: "image/x-icon", ext: "ico", label: "ICO" },
} as const;

export type ImageType = keyof typeof IMAGE_TYPES;

export type SniffedImage = {
	type: ImageType;
	mediaType: (typeof IMAGE_TYPES)[ImageType]["mediaType"];
	ext: (typeof IMAGE_TYPES)[ImageType]["ext"];
	/** Pixels across and down; absent when the header that holds them could not be read. */
	width?: number;
	height?: number;
	/** The bytes stop before the image's own end (PNG IEND, JPEG EOI, GIF trailer, a RIFF or box size). */
	truncated: boolean;
};

type Parsed = { width?: number; height?: number; truncated: boolean };

/** What the bytes are, or null when they are no image Chat hosts. */
export function sniffImage(bytes: Uint8Array): SniffedImage | null {
	const found = detect(bytes);
	if (!found) return null;
	const [type, parsed] = found;
	const { mediaType, ext } = IMAGE_TYPES[type];
	const out: SniffedImage = { type, mediaType, ext, truncated: parsed.truncated };
	if (parsed.width && parsed.height) {
		out.width = parsed.width;
		out.height = parsed.height;
	}
	return out;
}

function detect(b: Uint8Array): [ImageType, Parsed] | null {
	if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return ["png", parsePng(b)];
	if (startsWith(b, [0xff, 0xd8, 0xff])) return ["jpeg", parseJpeg(b)];
	if (ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 4) === "WEBP") return ["webp", parseWebp(b)];
	if (ascii(b, 0, 6) === "GIF87a" || ascii(b, 0, 6) === "GIF89a") return ["gif", parseGif(b)];
	if (ascii(b, 4, 4) === "ftyp" && isAvifBrand(b)) return ["avif", parseAvif(b)];
	if (ascii(b, 0, 2) === "BM") {
		const bmp = parseBmp(b);
		return bmp ? ["bmp", bmp] : null;
	}
	if (startsWith(b, [0, 0, 1, 0])) {
		const ico = parseIco(b);
		return ico ? ["ico", ico] : null;
	}
	return null;
}

function startsWith(b: Uint8Array, magic: number[]): boolean {
	return b.length >= magic.length && magic.every((v, i) => b[i] === v);
}

function ascii(b: Uint8Array, at: number, length: number): string {
	if (at + length > b.length) return "";
	return String.fromCharCode(...b.subarray(at, at + length));
}

const u16be = (b: Uint8Array, i: number) => (b[i]! << 8) | b[i + 1]!;
const u16le = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8);
const u24le = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16);
const u32be = (b: Uint8Array, i: number) =>
	((b[i]! << 24) | (b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!) >>> 0;
const u32le = (b: Uint8Array, i: number) =>
	((b[i + 3]! << 24) | (b[i + 2]! << 16) | (b[i + 1]! << 8) | b[i]!) >>> 0;
const i32le = (b: Uint8Array, i: number) => u32le(b, i) | 0;

/** Signature, IHDR first, then chunk by chunk to IEND. */
function parsePng(b: Uint8Array): Parsed {
	if (b.length < 8 + 8 + 13 || ascii(b, 12, 4) !== "IHDR") return { truncated: b.length < 8 + 8 + 13 };
	const width = u32be(b, 16);
	const height = u32be(b, 20);
	let at = 8;
	while (at + 8 <= b.length) {
		const length = u32be(b, at);
		const type = ascii(b, at + 4, 4);
		const end = at + 12 + length;
		if (end > b.length) break;
		if (type === "IEND") return { width, height, truncated: false };
		at = end;
	}
	return { width, height, truncated: true };
}

/** Segments up to SOF for the size, then through scan data to EOI; an EXIF thumbnail is skipped whole. */
function parseJpeg(b: Uint8Array): Parsed {
	let width: number | undefined;
	let height: number | undefined;
	let at = 2;
	while (at < b.length) {
		if (b[at] !== 0xff) {
			at++; // stray bytes between segments: skip to the next marker as decoders do
			continue;
		}
		while (at < b.length && b[at] === 0xff) at++;
		if (at >= b.length) break;
		const marker = b[at++]!;
		if (marker === 0xd9) return { width, height, truncated: false };
		if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) continue;
		if (at + 2 > b.length) break;
		const length = u16be(b, at);
		if (length < 2 || at + length > b.length) break;
		if (isStartOfFrame(marker) && length >= 7) {
			height = u16be(b, at + 3);
			width = u16be(b, at + 5);
		}
		at += length;
		if (marker === 0xda) at = skipScan(b, at);
	}
	return { width, height, truncated: true };
}

function isStartOfFrame(marker: number): boolean {
	return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

/** Entropy-coded data ends at the first marker that is not a stuffed 0xFF00 or a restart marker. */
function skipScan(b: Uint8Array, from: number): number {
	let at = from;
	while (at + 1 < b.length) {
		if (b[at] === 0xff) {
			const next = b[at + 1]!;
			if (next !== 0x00 && next !== 0xff && !(next >= 0xd0 && next <= 0xd7)) return at;
		}
		at++;
	}
	return b.length;
}

/** RIFF container: the declared size must be there; the first chunk holds the canvas size. */
function parseWebp(b: Uint8Array): Parsed {
	const riffEnd = 8 + u32le(b, 4);
	const truncated = riffEnd > b.length || b.length < 30;
	if (b.length < 30) return { truncated };
	const chunk = ascii(b, 12, 4);
	const data = 20;
	if (chunk === "VP8X") return { width: 1 + u24le(b, data + 4), height: 1 + u24le(b, data + 7), truncated };
	if (chunk === "VP8L" && b[data] === 0x2f) {
		const bits = u32le(b, data + 1);
		return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >>> 14) & 0x3fff), truncated };
	}
	if (chunk === "VP8 " && b[data + 3] === 0x9d && b[data + 4] === 0x01 && b[data + 5] === 0x2a) {
		return { width: u16le(b, data + 6) & 0x3fff, height: u16le(b, data + 8) & 0x3fff, truncated };
	}
	return { truncated };
}

/** Header and screen descriptor, then block by block to the trailer (0x3B). */
function parseGif(b: Uint8Array): Parsed {
	if (b.length < 13) return { truncated: true };
	let width = u16le(b, 6);
	let height = u16le(b, 8);
	let at = 13 + colorTableSize(b[10]!);
	let frames = 0;
	while (at < b.length) {
		const block = b[at]!;
		if (block === 0x3b) return { width, height, truncated: false };
		if (block === 0x21) {
			at = skipSubBlocks(b, at + 2);
		} else if (block === 0x2c) {
			if (at + 10 > b.length) break;
			if (!width || !height) {
				width = u16le(b, at + 5);
				height = u16le(b, at + 7);
			}
			frames++;
			at = skipSubBlocks(b, at + 10 + colorTableSize(b[at + 9]!) + 1);
		} else {
			// Garbage after the last frame: browsers draw what came before it.
			return { width, height, truncated: frames === 0 };
		}
	}
	return { width, height, truncated: true };
}

function colorTableSize(packed: number): number {
	return packed & 0x80 ? 3 * 2 ** ((packed & 0x07) + 1) : 0;
}

/** Returns the offset after the zero-length terminator, or past the end when it is missing. */
function skipSubBlocks(b: Uint8Array, from: number): number {
	let at = from;
	while (at < b.length) {
		const size = b[at]!;
		at += 1 + size;
		if (size === 0) return at;
	}
	return b.length + 1;
}

const AVIF_BRANDS = new Set(["avif", "avis"]);

function isAvifBrand(b: Uint8Array): boolean {
	const size = Math.min(u32be(b, 0), b.length);
	if (AVIF_BRANDS.has(ascii(b, 8, 4))) return true;
	for (let at = 16; at + 4 <= size; at += 4) if (AVIF_BRANDS.has(ascii(b, at, 4))) return true;
	return false;
}

type Box = { type: string; start: number; end: number; bodyStart: number };

/** ISO BMFF boxes in [from, to); a box running past `to` ends the list and marks it cut short. */
function boxes(b: Uint8Array, from: number, to: number): { list: Box[]; overrun: boolean } {
	const list: Box[] = [];
	let at = from;
	while (at + 8 <= to) {
		let size = u32be(b, at);
		let header = 8;
		if (size === 1) {
			if (at + 16 > to) return { list, overrun: true };
			size = u32be(b, at + 8) * 2 ** 32 + u32be(b, at + 12);
			header = 16;
		} else if (size === 0) {
			size = to - at;
		}
		if (size < header) return { list, overrun: false };
		const end = at + size;
		list.push({ type: ascii(b, at + 4, 4), start: at, end: Math.min(end, to), bodyStart: at + header });
		if (end > to) return { list, overrun: true };
		at = end;
	}
	return { list, overrun: at < to };
}

/** Top-level boxes must all be there, with the pixels (mdat or idat); the size is the largest ispe. */
function parseAvif(b: Uint8Array): Parsed {
	const top = boxes(b, 0, b.length);
	let truncated = top.overrun;
	const meta = top.list.find((box) => box.type === "meta");
	let hasPixels = top.list.some((box) => box.type === "mdat");
	let width: number | undefined;
	let height: number | undefined;
	if (meta) {
		const inMeta = boxes(b, meta.bodyStart + 4, meta.end).list; // meta is a full box: skip version and flags
		hasPixels ||= inMeta.some((box) => box.type === "idat");
		const iprp = inMeta.find((box) => box.type === "iprp");
		const ipco = iprp && boxes(b, iprp.bodyStart, iprp.end).list.find((box) => box.type === "ipco");
		for (const box of ipco ? boxes(b, ipco.bodyStart, ipco.end).list : []) {
			if (box.type !== "ispe" || box.bodyStart + 12 > box.end) continue;
			const w = u32be(b, box.bodyStart + 4);
			const h = u32be(b, box.bodyStart + 8);
			if (!width || !height || w * h > width * height) {
				width = w;
				height = h;
			}
		}
	}
	if (!hasPixels) truncated = true;
	return { width, height, truncated };
}

const DIB_HEADER_SIZES = new Set([12, 40, 52, 56, 64, 108, 124]);

/** File header and DIB header; uncompressed rows (or the declared compressed size) must all be there. */
function parseBmp(b: Uint8Array): Parsed | null {
	if (b.length < 18) return b.length >= 2 ? { truncated: true } : null;
	const dibSize = u32le(b, 14);
	if (!DIB_HEADER_SIZES.has(dibSize)) return null;
	if (b.length < 14 + dibSize) return { truncated: true };
	const pixelsAt = u32le(b, 10);
	const core = dibSize === 12;
	const width = core ? u16le(b, 18) : i32le(b, 18);
	const rawHeight = core ? u16le(b, 20) : i32le(b, 22);
	const bitsPerPixel = core ? u16le(b, 24) : u16le(b, 28);
	const compression = core ? 0 : u32le(b, 30);
	const imageSize = core ? 0 : u32le(b, 34);
	const height = Math.abs(rawHeight);
	if (width <= 0 || height === 0 || ![1, 2, 4, 8, 16, 24, 32, 64].includes(bitsPerPixel)) return null;
	const uncompressed = compression === 0 || compression === 3 || compression === 6;
	const needed = uncompressed ? Math.floor((bitsPerPixel * width + 31) / 32) * 4 * height : imageSize;
	return { width, height, truncated: pixelsAt + needed > b.length };
}

/** Directory of entries, each a PNG or a DIB inside the file; the size is the largest entry. */
function parseIco(b: Uint8Array): Parsed | null {
	if (b.length < 6) return null;
	const count = u16le(b, 4);
	if (count === 0) return null;
	const dirEnd = 6 + 16 * count;
	if (dirEnd > b.length) return { truncated: true };
	let width = 0;
	let height = 0;
	let truncated = false;
	for (let i = 0; i < count; i++) {
		const entry = 6 + 16 * i;
		if (b[entry + 3] !== 0 || u16le(b, entry + 4) > 1) return null;
		const size = u32le(b, entry + 8);
		const offset = u32le(b, entry + 12);
		if (size === 0 || offset < dirEnd) return null;
		if (offset + size > b.length) {
			truncated = true;
			if (offset + 8 > b.length) continue;
		}
		const isPng = startsWith(b.subarray(offset), [0x89, 0x50, 0x4e, 0x47]);
		if (!isPng && u32le(b, offset) !== 40) return null;
		const w = b[entry] || 256;
		const h = b[entry + 1] || 256;
		if (w * h > width * height) {
			width = w;
			height = h;
		}
	}
	return { width: width || undefined, height: height || undefined, truncated };
}
