import { afterEach, beforeEach, expect, test } from "bun:test";
import { describeStores } from "../store/testing";
import { type ApiServer, createDocument, json, startApiServer } from "../testing/api-server";
import { imageMarkdown } from "./service";
import { makePng } from "./test-images";

describeStores("images API", (t) => {
	let api: ApiServer;
	beforeEach(async () => {
		api = await startApiServer(t.store, { env: { MAX_BODY_BYTES: "65536" } });
	});
	afterEach(async () => {
		await api.stop();
	});

	const upload = (
		who: "alice" | "bob" | "carol" | "dave",
		id: string,
		bytes: Uint8Array,
		query = "?alt=A%20chart",
		type = "image/png",
	) => api.call(who, "POST", `/api/documents/${id}/images${query}`, bytes, { "content-type": type });

	test("a writer uploads an image and gets its path and Markdown; readers of the document load it", async () => {
		const id = await createDocument(api);
		const res = await upload("bob", id, makePng(400, 20));
		expect(res.status).toBe(201);
		const stored = (await res.json()) as { path: string; markdown: string; mediaType: string };
		expect(stored.path).toMatch(/^\/images\/[0-9a-f]{64}\.png$/);
		expect(stored.markdown).toBe(`![A chart](${stored.path})`);
		expect(stored.mediaType).toBe("image/png");

		const served = await api.call("carol", "GET", stored.path);
		expect(served.status).toBe(200);
		expect(served.headers.get("content-type")).toBe("image/png");
		expect(served.headers.get("x-content-type-options")).toBe("nosniff");
		expect(served.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
		expect(served.headers.get("cache-control")).toBe("private, max-age=31536000, immutable");
		expect(new Uint8Array(await served.arrayBuffer()).length).toBeGreaterThan(0);

		const thumb = await api.call("carol", "GET", `${stored.path}?w=360`);
		expect(thumb.status).toBe(200);
		expect(thumb.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");

		const wrongWidth = await api.call("carol", "GET", `${stored.path}?w=361`);
		expect(wrongWidth.status).toBe(400);
		expect((await json(wrongWidth)).code).toBe("thumbnail-width");

		const doc = await json(await api.call("carol", "GET", `/api/documents/${id}`));
		expect(doc.images).toEqual([stored.path]);
	});

	test("an image is served to nobody who cannot read a document holding it", async () => {
		const id = await createDocument(api);
		const { path } = (await (await upload("alice", id, makePng(10, 10))).json()) as { path: string };
		for (const who of ["dave", null] as const) {
			const res = await api.call(who, "GET", path);
			expect(res.status).toBe(404);
			expect((await json(res)).code).toBe("not-found");
		}
		expect((await api.call("alice", "GET", `/images/${"0".repeat(64)}.png`)).status).toBe(404);
		expect((await api.call("alice", "GET", "/images/nope.svg")).status).toBe(404);
		// Deleting the document takes its images out of reach too.
		await api.call("alice", "DELETE", `/api/documents/${id}`);
		expect((await api.call("alice", "GET", path)).status).toBe(404);
	});

	test("uploads are refused with their codes", async () => {
		const id = await createDocument(api);
		const cases: [Response, number, string][] = [
			[await upload("carol", id, makePng(10, 10)), 403, "repository-forbidden"],
			[await upload("dave", id, makePng(10, 10)), 404, "document-not-found"],
			[
				await upload(
					"bob",
					id,
					new TextEncoder().encode("<svg></svg>"),
					"?alt=x",
					"application/octet-stream",
				),
				415,
				"image-type-unsupported",
			],
			[await upload("bob", id, makePng(10, 10), "?alt=x", "image/jpeg"), 400, "image-type-mismatch"],
			[await upload("bob", id, makePng(10, 10), "?alt=a%0Aline"), 400, "invalid-request"],
			[await upload("bob", id, new Uint8Array(70_000)), 413, "body-too-large"],
		];
		for (const [res, status, code] of cases) {
			expect({ status: res.status, code: (await json(res)).code }).toEqual({ status, code });
		}
		await api.call("bob", "POST", `/api/documents/${id}/archive`);
		const archived = await upload("bob", id, makePng(10, 10));
		expect(archived.status).toBe(409);
		expect((await json(archived)).code).toBe("document-archived");
	});

	test("alt text is escaped in the Markdown", () => {
		expect(imageMarkdown("a [b] \\c", "/images/x.png")).toBe("![a \\[b\\] \\\\c](/images/x.png)");
	});
});
