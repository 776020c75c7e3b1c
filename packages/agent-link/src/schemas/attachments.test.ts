import { describe, expect, test } from "bun:test";
import { parseServerFrame } from "../parse";
import { attachment } from "../testing/examples";
import { repeat } from "../testing/helpers";

function parseAttachments(attachments: unknown) {
	const turn = { type: "turn", session: "s1", turn: "t1", prompt: "Look", attachments, tools: [] };
	return parseServerFrame(JSON.stringify(turn), { features: ["attachments"] });
}

function expectRefused(attachments: unknown, fragment: string) {
	const result = parseAttachments(attachments);
	expect(result.ok).toBe(false);
	if (!result.ok) expect(result.error.message).toContain(fragment);
}

const base64 = (bytes: number) => Buffer.alloc(bytes, 7).toString("base64");
const file = (bytes: number, extra: object = {}) => ({
	...attachment,
	size: bytes,
	data: base64(bytes),
	...extra,
});

describe("attachments", () => {
	test("the spec's example parses, as does an image", () => {
		expect(parseAttachments([attachment]).ok).toBe(true);
		for (const mediaType of ["image/png", "image/jpeg", "image/webp", "image/gif"]) {
			expect(parseAttachments([file(3, { kind: "image", mediaType, name: "shot.png" })]).ok).toBe(true);
		}
	});

	test("kind and mediaType agree: images are PNG, JPEG, WebP or GIF; every file is text/plain", () => {
		expectRefused(
			[file(3, { kind: "image", mediaType: "text/plain" })],
			"attachments[0].mediaType must be one of",
		);
		expectRefused([file(3, { kind: "image", mediaType: "image/svg+xml" })], "attachments[0].mediaType");
		expectRefused(
			[file(3, { kind: "file", mediaType: "text/html" })],
			'attachments[0].mediaType must be "text/plain"',
		);
		expectRefused([file(3, { kind: "video" })], "attachments[0].kind must be");
	});

	test("name: 1 to 255 characters, no folder, no control characters", () => {
		expect(parseAttachments([file(3, { name: repeat(255) })]).ok).toBe(true);
		expect(parseAttachments([file(3, { name: "résumé (final).md" })]).ok).toBe(true);
		expectRefused([file(3, { name: repeat(256) })], "attachments[0].name is longer than 255 characters");
		expectRefused([file(3, { name: "" })], "attachments[0].name must not be empty");
		for (const name of ["notes/a.md", "..\\a.md", "a\nb.md", "a\u0000.md", "a\u007f.md", "a\u0085.md"]) {
			expectRefused([file(3, { name })], "attachments[0].name must be a file name with no folder");
		}
	});

	test("size is the decoded length of data, which is standard base64", () => {
		expectRefused([file(3, { size: 4 })], "attachments[0].size must be the number of bytes data decodes to");
		expectRefused([file(3, { data: "a-b_" })], "attachments[0].data must be standard base64");
		expect(parseAttachments([file(2, { data: "aGk" })]).ok).toBe(true);
		expect(parseAttachments([file(0, { data: "" })]).ok).toBe(true);
	});

	test("at most 20, together at most 1,048,576 bytes before base64", () => {
		const many = (n: number) => Array.from({ length: n }, (_, i) => file(1, { id: `att-${i}` }));
		expect(parseAttachments(many(20)).ok).toBe(true);
		expectRefused(many(21), "attachments has more than 20 entries");
		expect(parseAttachments([file(524_288), file(524_288, { id: "att-2" })]).ok).toBe(true);
		expectRefused(
			[file(524_288), file(524_289, { id: "att-2" })],
			"attachments must hold at most 1048576 bytes in all",
		);
		expect(parseAttachments([file(1_048_576)]).ok).toBe(true);
		expectRefused([file(1_048_577)], "attachments[0].size must be at most 1048576");
	});

	test("an attachment is strict", () => {
		expectRefused([{ ...attachment, path: "/tmp/x" }], 'attachments[0] has an unknown field "path"');
		expectRefused([{ ...attachment, id: "" }], "attachments[0].id must not be empty");
	});
});
