import { expect, test } from "bun:test";
import { DocumentService } from "../documents/service";
import { describeStores } from "../store/testing";
import { testDeps } from "../testing/domain";
import {
	DocumentImageError,
	DocumentImageService,
	HOSTED_IMAGE_TYPES,
	imagePath,
	imageResponseHeaders,
	parseImagePath,
} from "./service";
import { sniffImage } from "./sniff";
import { makeAvif, makeGif, makeJpeg, makePng, makeWebp } from "./test-images";

async function rejected(promise: Promise<unknown>): Promise<DocumentImageError> {
	try {
		await promise;
	} catch (error) {
		if (error instanceof DocumentImageError) return error;
		throw error;
	}
	throw new Error("expected a DocumentImageError");
}

const everyone = () => true;
const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

describeStores("document images", (t) => {
	const setup = async (options: { maxStoredImageBytes?: number } = {}) => {
		const deps = testDeps(t.store);
		const docs = new DocumentService(deps);
		const images = new DocumentImageService(deps, options);
		const doc = await docs.create({ repository: "a/b", title: "Doc", createdBy: "alice" });
		return { deps, docs, images, doc };
	};

	test("stores by content: the type from the bytes, the path from their digest, the same bytes twice give one row", async () => {
		const { images, doc } = await setup();
		const png = makePng(40, 30);
		const stored = await images.store(doc.id, png);
		expect(stored).toEqual({
			path: `/images/${sha256(png)}.png`,
			sha256: sha256(png),
			ext: "png",
			mediaType: "image/png",
			width: 40,
			height: 30,
			size: png.length,
		});
		expect(await images.store(doc.id, png)).toEqual(stored);
		const jpeg = await makeJpeg(20, 10);
		expect((await images.store(doc.id, jpeg)).path).toBe(`/images/${sha256(jpeg)}.jpg`);
		const webp = await makeWebp(8, 8);
		expect((await images.store(doc.id, webp)).mediaType).toBe("image/webp");
		expect((await images.store(doc.id, makeGif(5, 5))).ext).toBe("gif");
		expect((await images.list(doc.id)).map((i) => i.ext).sort()).toEqual(["gif", "jpg", "png", "webp"]);
		const rows = await t.store.one(t.store.sql`SELECT count(*) AS n FROM document_images`);
		expect(rows).toEqual({ n: 4 });
	});

	test("the type is never taken from a name: non-images, other types, a wrong declared type and cut bytes are refused", async () => {
		const { images, doc } = await setup();
		const svg = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"></svg>');
		const notImage = await rejected(images.store(doc.id, svg, { declaredMediaType: "image/png" }));
		expect([notImage.code, notImage.status]).toEqual(["image-type-unsupported", 415]);
		expect((await rejected(images.store(doc.id, makeAvif(4, 4)))).code).toBe("image-type-unsupported");
		expect(
			(await rejected(images.store(doc.id, makePng(4, 4), { declaredMediaType: "image/svg+xml" }))).code,
		).toBe("image-type-unsupported");
		const mismatch = await rejected(images.store(doc.id, makePng(4, 4), { declaredMediaType: "image/jpeg" }));
		expect(mismatch.code).toBe("image-type-mismatch");
		expect(mismatch.message).toBe("The bytes are a PNG image, not the JPEG declared.");
		// image/jpg is read as the JPEG it names.
		const jpeg = await makeJpeg(6, 6);
		expect((await images.store(doc.id, jpeg, { declaredMediaType: "image/jpg" })).ext).toBe("jpg");
		const png = makePng(10, 10);
		expect((await rejected(images.store(doc.id, png.subarray(0, png.length - 12)))).code).toBe(
			"image-truncated",
		);
		// A tool's images may be any hosted type.
		const avif = makeAvif(4, 4);
		expect((await images.store(doc.id, avif, { types: HOSTED_IMAGE_TYPES })).mediaType).toBe("image/avif");
	});

	test("an image over MAX_STORED_IMAGE_BYTES is stored as a smaller copy, and the same upload finds it again", async () => {
		const { images, doc } = await setup({ maxStoredImageBytes: 20_000 });
		const big = makePng(200, 200, { noise: true });
		expect(big.length).toBeGreaterThan(20_000);
		const stored = await images.store(doc.id, big);
		expect(stored.ext).toBe("webp");
		expect(stored.size).toBeLessThanOrEqual(20_000);
		expect(stored.sha256).not.toBe(sha256(big));
		expect(await images.store(doc.id, big)).toEqual(stored);
		const served = await images.find(stored.sha256, "webp", everyone);
		expect(sniffImage(served!.bytes)?.type).toBe("webp");
		expect(sha256(served!.bytes)).toBe(stored.sha256);
	});

	test("a caller's lower maxBytes stores a smaller copy of bytes kept whole under the service's limit", async () => {
		const { images, doc } = await setup();
		const big = makePng(200, 200, { noise: true });
		const whole = await images.store(doc.id, big);
		expect(whole.sha256).toBe(sha256(big));
		const smaller = await images.store(doc.id, big, { maxBytes: 20_000 });
		expect(smaller.size).toBeLessThanOrEqual(20_000);
		expect(smaller.path).not.toBe(whole.path);
		// The same bytes under the same limit find that copy again; without it, the whole image.
		expect(await images.store(doc.id, big, { maxBytes: 20_000 })).toEqual(smaller);
		expect(await images.store(doc.id, big)).toEqual(whole);
		// A limit above the service's is the service's.
		const capped = await setup({ maxStoredImageBytes: 20_000 });
		expect(
			(await capped.images.store(capped.doc.id, big, { maxBytes: 10_000_000 })).size,
		).toBeLessThanOrEqual(20_000);
	});

	test("archived and missing documents take no images", async () => {
		const { docs, images, doc } = await setup();
		await docs.archive(doc.id);
		const archived = await rejected(images.store(doc.id, makePng(3, 3)));
		expect([archived.code, archived.status]).toEqual(["document-archived", 409]);
		const missing = await rejected(images.store("nosuchdocumt", makePng(3, 3)));
		expect([missing.code, missing.status]).toEqual(["document-not-found", 404]);
	});

	test("serving asks the caller about every document holding the image, and hides it when refused or deleted", async () => {
		const { docs, images, doc } = await setup();
		const other = await docs.create({ repository: "c/d", title: "Other", createdBy: "bob" });
		const png = makePng(12, 12);
		const stored = await images.store(doc.id, png);
		await images.store(other.id, png);
		const asked: string[][] = [];
		const served = await images.find(stored.sha256, "png", (ids) => {
			asked.push([...ids]);
			return ids.includes(other.id);
		});
		expect(served?.mediaType).toBe("image/png");
		expect(served?.bytes).toEqual(png);
		expect(asked).toEqual([[doc.id, other.id].sort()]);
		expect(await images.find(stored.sha256, "png", async () => false)).toBeNull();
		// Another extension, a bad digest, or an unknown one is simply not there.
		expect(await images.find(stored.sha256, "jpg", everyone)).toBeNull();
		expect(await images.find("xyz", "png", everyone)).toBeNull();
		expect(await images.find("0".repeat(64), "png", everyone)).toBeNull();
		await docs.softDelete(doc.id);
		await docs.softDelete(other.id);
		expect(await images.find(stored.sha256, "png", everyone)).toBeNull();
	});

	test("thumbnails: a smaller copy made once and kept, the image itself when no wider, and only Chat's widths", async () => {
		const { images, doc } = await setup();
		const png = makePng(400, 200);
		const stored = await images.store(doc.id, png);
		const small = await images.thumbnail(stored.sha256, "png", 160, everyone);
		expect(small?.mediaType).toBe("image/webp");
		expect(sniffImage(small!.bytes)?.width).toBe(160);
		const again = await images.thumbnail(stored.sha256, "png", 160, everyone);
		expect(again?.bytes).toEqual(small!.bytes);
		expect(await t.store.one(t.store.sql`SELECT count(*) AS n FROM image_thumbnails`)).toEqual({ n: 1 });
		expect((await images.thumbnail(stored.sha256, "png", 480, everyone))?.bytes).toEqual(png);
		expect(await images.thumbnail(stored.sha256, "png", 160, () => false)).toBeNull();
		expect((await rejected(images.thumbnail(stored.sha256, "png", 100, everyone))).code).toBe(
			"thumbnail-width",
		);
	});

	test("isDocumentImage tells a document's own upload from another document's", async () => {
		const { docs, images, doc } = await setup();
		const other = await docs.create({ repository: "a/b", title: "Other", createdBy: "bob" });
		const stored = await images.store(doc.id, makePng(5, 5));
		expect(await images.isDocumentImage(doc.id, stored.path)).toBe(true);
		expect(await images.isDocumentImage(other.id, stored.path)).toBe(false);
		expect(await images.isDocumentImage(doc.id, "https://example.com/x.png")).toBe(false);
	});
});

test("paths and headers", () => {
	const digest = "a".repeat(64);
	expect(imagePath(digest, "png")).toBe(`/images/${digest}.png`);
	expect(parseImagePath(`/images/${digest}.webp`)).toEqual({ sha256: digest, ext: "webp" });
	expect(parseImagePath(`/images/${digest}.svg`)).toBeNull();
	expect(parseImagePath(`/images/${digest.toUpperCase()}.png`)).toBeNull();
	expect(parseImagePath(`/images/../${digest}.png`)).toBeNull();
	expect(imageResponseHeaders("image/png")).toMatchObject({
		"content-type": "image/png",
		"x-content-type-options": "nosniff",
		"content-security-policy": "default-src 'none'; sandbox",
	});
});
