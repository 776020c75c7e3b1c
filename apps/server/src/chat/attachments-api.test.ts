// Files in Chat over HTTP (attachments): a message's files sent as base64 JSON, kept with it on both databases,
// listed on its view without their bytes, served to readers as what their bytes are; refusals keep nothing.
import { afterEach, expect, test } from "bun:test";
import { makePng } from "../images/test-images";
import { describeStores } from "../store/testing";
import { type ApiServer, createDocument, json, startApiServer } from "../testing/api-server";
import { readAttachments } from "./attachment-rows";

const b64 = (bytes: Uint8Array | string) =>
	Buffer.from(typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes).toString("base64");

type Listed = {
	id: string;
	attachments?: {
		index: number;
		name: string;
		kind: string;
		mediaType: string;
		size: number;
		path: string;
	}[];
};

describeStores("Files in Chat", (t) => {
	let api: ApiServer | undefined;
	afterEach(async () => {
		await api?.stop();
		api = undefined;
	});

	test("a message's files are kept with it, in order, listed without bytes and served to readers only", async () => {
		api = await startApiServer(t.store);
		const id = await createDocument(api);
		const png = makePng(3, 2);
		const posted = await api.call("bob", "POST", `/api/documents/${id}/messages`, {
			body: "Here are the mockups",
			attachments: [
				{ name: "../mockup.txt", data: b64(png) },
				{ name: "notes.md", data: b64("# Notes\n\nčšž\n") },
			],
		});
		expect(posted.status).toBe(201);
		const { message } = (await posted.json()) as { message: Listed };
		const path = (i: number) => `/api/documents/${id}/messages/${message.id}/attachments/${i}`;
		expect(message.attachments).toEqual([
			{
				index: 0,
				name: "mockup.txt",
				kind: "image",
				mediaType: "image/png",
				size: png.length,
				path: path(0),
			},
			{ index: 1, name: "notes.md", kind: "file", mediaType: "text/plain", size: 16, path: path(1) },
		]);
		const page = await json(await api.call("carol", "GET", `/api/documents/${id}/messages`));
		expect((page.messages as Listed[])[0]!.attachments).toEqual(message.attachments);

		// Stored as sent, bytes and order, on this database.
		const stored = await readAttachments(t.store, message.id);
		expect(stored.map((f) => [f.index, f.name, f.kind, f.mediaType])).toEqual([
			[0, "mockup.txt", "image", "image/png"],
			[1, "notes.md", "file", "text/plain"],
		]);
		expect(stored[0]!.bytes).toEqual(png);

		const image = await api.call("carol", "GET", path(0));
		expect(image.status).toBe(200);
		expect(image.headers.get("content-type")).toBe("image/png");
		expect(image.headers.get("x-content-type-options")).toBe("nosniff");
		expect(Buffer.from(await image.arrayBuffer()).equals(png)).toBe(true);
		const notes = await api.call("carol", "GET", path(1));
		expect(notes.headers.get("content-type")).toBe("text/plain; charset=utf-8");
		expect(notes.headers.get("content-disposition")).toBe("attachment; filename*=UTF-8''notes.md");
		expect(await notes.text()).toBe("# Notes\n\nčšž\n");
		expect((await api.call("dave", "GET", path(0))).status).toBe(404);
		expect((await json(await api.call("carol", "GET", path(2)))).code).toBe("attachment-not-found");
		expect((await api.call("carol", "GET", path(-1))).status).toBe(404);
	});

	test("a message without files has no attachments field", async () => {
		api = await startApiServer(t.store);
		const id = await createDocument(api);
		const res = await api.call("bob", "POST", `/api/documents/${id}/messages`, {
			body: "plain",
			attachments: [],
		});
		expect("attachments" in ((await json(res)).message as unknown as object)).toBe(false);
	});

	test("wrong files are refused with their codes and nothing is posted", async () => {
		api = await startApiServer(t.store, {
			env: { CHAT_ATTACHMENT_MAX_BYTES: "8", CHAT_ATTACHMENT_MAX_TOTAL_BYTES: "12" },
		});
		const id = await createDocument(api);
		const post = (attachments: unknown) =>
			api!.call("bob", "POST", `/api/documents/${id}/messages`, { body: "files", attachments });
		const many = Array.from({ length: 21 }, (_, i) => ({ name: `${i}`, data: b64("x") }));
		const cases: [unknown, number, string][] = [
			[[{ name: "a.txt", data: "not base64!" }], 400, "attachment-data-invalid"],
			[[{ name: "a.txt", data: b64(new Uint8Array([0xff, 0xfe, 0x00])) }], 415, "attachment-unsupported"],
			[[{ name: "/", data: b64("x") }], 400, "attachment-name-invalid"],
			[[{ name: "a.txt", data: b64("123456789") }], 413, "attachment-too-large"],
			[
				[
					{ name: "a", data: b64("1234567") },
					{ name: "b", data: b64("123456") },
				],
				413,
				"attachments-too-large",
			],
			[many, 400, "too-many-attachments"],
			[[{ name: "a.txt" }], 400, "invalid-request"],
		];
		for (const [attachments, status, code] of cases) {
			const res = await post(attachments);
			expect({ status: res.status, code: (await json(res)).code }).toEqual({ status, code });
		}
		expect((await json(await api.call("bob", "GET", `/api/documents/${id}/messages`))).messages).toEqual([]);
	});
});
