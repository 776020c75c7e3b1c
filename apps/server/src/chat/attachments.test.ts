// Files in Chat (attachments): the kind comes from the bytes, never the name; names are labels; the caps hold.
import { describe, expect, test } from "bun:test";
import { makeBmp, makeGif, makeJpeg, makePng, makeWebp } from "../images/test-images";
import { checkAttachments, cleanAttachmentName, SPEC_ATTACHMENT_CAPS } from "./attachments";
import { ChatError } from "./errors";

const text = (s: string) => new TextEncoder().encode(s);

function refusal(fn: () => unknown): { code: string; status: number } {
	try {
		fn();
	} catch (error) {
		if (error instanceof ChatError) return { code: error.code, status: error.status };
		throw error;
	}
	throw new Error("not refused");
}

describe("kinds from the bytes", () => {
	test("PNG, JPEG, WebP and GIF are images whatever they are called; text is text/plain whatever it is called", async () => {
		const files = [
			{ name: "notes.txt", bytes: makePng(2, 2) },
			{ name: "photo", bytes: await makeJpeg(2, 2) },
			{ name: "a.webp", bytes: await makeWebp(2, 2) },
			{ name: "a.gif", bytes: makeGif(2, 2) },
			{ name: "diagram.png", bytes: text("# not an image\n") },
			{ name: "page.html", bytes: text("<!doctype html><script>alert(1)</script>") },
			{ name: "logo.svg", bytes: text('<svg xmlns="http://www.w3.org/2000/svg"/>') },
			{ name: "empty.md", bytes: new Uint8Array() },
		];
		const checked = checkAttachments(files, SPEC_ATTACHMENT_CAPS);
		expect(checked.map((f) => [f.name, f.kind, f.mediaType])).toEqual([
			["notes.txt", "image", "image/png"],
			["photo", "image", "image/jpeg"],
			["a.webp", "image", "image/webp"],
			["a.gif", "image", "image/gif"],
			["diagram.png", "file", "text/plain"],
			// Never HTML or SVG: markup is kept as the text it is.
			["page.html", "file", "text/plain"],
			["logo.svg", "file", "text/plain"],
			["empty.md", "file", "text/plain"],
		]);
		expect(checked[0]!.bytes).toEqual(files[0]!.bytes);
	});

	test("bytes that are neither a sent image nor UTF-8 text are refused, whatever the name", () => {
		const one = (name: string, bytes: Uint8Array) =>
			refusal(() => checkAttachments([{ name, bytes }], SPEC_ATTACHMENT_CAPS));
		expect(one("notes.txt", new Uint8Array([0xc3, 0x28]))).toEqual({
			code: "attachment-unsupported",
			status: 415,
		});
		expect(one("notes.txt", text("a\u0000b"))).toEqual({ code: "attachment-unsupported", status: 415 });
		// A BMP is an image the sniffer knows, but not one a turn carries.
		expect(one("a.png", makeBmp(2, 2))).toEqual({ code: "attachment-unsupported", status: 415 });
		expect(one("a.png", makePng(4, 4).subarray(0, 40))).toEqual({
			code: "attachment-unreadable",
			status: 400,
		});
	});
});

describe("names", () => {
	test("a label: no folder, no control characters, at most 255 characters", () => {
		expect(cleanAttachmentName("../../etc/passwd")).toBe("passwd");
		expect(cleanAttachmentName("C:\\Users\\bo\\notes.md")).toBe("notes.md");
		expect(cleanAttachmentName(" re\u0000port\u001b\u0085.md\n")).toBe("report.md");
		expect(cleanAttachmentName(`${"é".repeat(300)}.md`)).toBe("é".repeat(255));
		expect(cleanAttachmentName("日本語.txt")).toBe("日本語.txt");
		expect(refusal(() => cleanAttachmentName("dir/"))).toEqual({
			code: "attachment-name-invalid",
			status: 400,
		});
		expect(refusal(() => cleanAttachmentName("\u0001"))).toEqual({
			code: "attachment-name-invalid",
			status: 400,
		});
	});
});

describe("caps", () => {
	test("at most 20 files", () => {
		const files = Array.from({ length: 21 }, (_, i) => ({ name: `${i}.txt`, bytes: text("x") }));
		expect(checkAttachments(files.slice(0, 20), SPEC_ATTACHMENT_CAPS)).toHaveLength(20);
		expect(refusal(() => checkAttachments(files, SPEC_ATTACHMENT_CAPS))).toEqual({
			code: "too-many-attachments",
			status: 400,
		});
	});

	test("the spec's 1,048,576 bytes in all, and a deployment's own caps per file and in all", () => {
		const half = new Uint8Array(524_288).fill(0x61);
		expect(
			checkAttachments(
				[
					{ name: "a", bytes: half },
					{ name: "b", bytes: half },
				],
				SPEC_ATTACHMENT_CAPS,
			),
		).toHaveLength(2);
		const over = [
			{ name: "a", bytes: half },
			{ name: "b", bytes: half },
			{ name: "c", bytes: text("x") },
		];
		expect(refusal(() => checkAttachments(over, SPEC_ATTACHMENT_CAPS))).toEqual({
			code: "attachments-too-large",
			status: 413,
		});
		const caps = { maxBytes: 10, maxTotalBytes: 15 };
		expect(refusal(() => checkAttachments([{ name: "a", bytes: text("x".repeat(11)) }], caps))).toEqual({
			code: "attachment-too-large",
			status: 413,
		});
		const two = [
			{ name: "a", bytes: text("x".repeat(10)) },
			{ name: "b", bytes: text("x".repeat(6)) },
		];
		expect(refusal(() => checkAttachments(two, caps))).toEqual({
			code: "attachments-too-large",
			status: 413,
		});
	});
});
