import { describe, expect, test } from "bun:test";
import { toolError, toolImages } from "../testing/examples";
import { repeat } from "../testing/helpers";
import {
	readToolError,
	readToolResult,
	toolErrorSchema,
	toolImageSchema,
	toolImageType,
	toolResultImages,
} from "./tool-results";

describe("structured tool errors", () => {
	test("the spec's envelope is read, as an object or as its JSON text", () => {
		expect(readToolError(toolError)).toEqual(toolError);
		expect(readToolError(JSON.stringify(toolError))).toEqual(toolError);
		expect(readToolError({ error: { code: "failed", message: "It failed." } })).toEqual({
			error: { code: "failed", message: "It failed." },
		});
	});

	test("the envelope has exactly its fields", () => {
		expect(readToolError({ ...toolError, extra: 1 })).toBeNull();
		expect(readToolError({ error: { ...toolError.error, stack: "x" } })).toBeNull();
		expect(readToolError({ error: "plain" })).toBeNull();
		expect(readToolError("not json")).toBeNull();
		expect(readToolError(null)).toBeNull();
	});

	test("code and kind are identifiers of 1 to 128 characters", () => {
		const withCode = (code: string) => toolErrorSchema.safeParse({ error: { code, message: "m" } }).success;
		const withKind = (kind: string) =>
			toolErrorSchema.safeParse({ error: { code: "c", kind, message: "m" } }).success;
		for (const good of [
			"a",
			"9",
			"no-repository-credential",
			"NoRepositoryCredential",
			"a.b_c-d",
			`a${repeat(127)}`,
		]) {
			expect(withCode(good), good).toBe(true);
			expect(withKind(good), good).toBe(true);
		}
		for (const bad of ["", "-a", "_a", "a b", 'a"b', "a:b", "a=b", "é", `a${repeat(128)}`]) {
			expect(withCode(bad), bad).toBe(false);
			expect(withKind(bad), bad).toBe(false);
		}
	});

	test("message is 1 to 4000 characters", () => {
		const withMessage = (message: string) =>
			toolErrorSchema.safeParse({ error: { code: "c", message } }).success;
		expect(withMessage(repeat(4000, "😀"))).toBe(true);
		expect(withMessage(repeat(4001))).toBe(false);
		expect(withMessage("")).toBe(false);
	});
});

describe("images a tool made", () => {
	test("the spec's content blocks are read in order, as an object or its JSON text", () => {
		const blocks = readToolResult(toolImages);
		expect(blocks).toEqual([
			{ kind: "text", block: { type: "text", text: "Here is the diagram." } },
			{
				kind: "image",
				block: {
					type: "image",
					data: "iVBORw0KGgo=",
					mimeType: "image/png",
					alt: "A diagram",
					caption: "Figure 1",
				},
			},
		]);
		expect(readToolResult(JSON.stringify(toolImages))).toEqual(blocks);
		expect(toolResultImages(toolImages)).toHaveLength(1);
	});

	test("extra keys are ignored; a non-string alt or caption is ignored; empty strings are kept", () => {
		const block = {
			type: "image",
			data: "AA",
			mimeType: "image/png",
			alt: 3,
			caption: "",
			annotations: { x: 1 },
		};
		expect(toolImageSchema.parse(block)).toEqual({
			type: "image",
			data: "AA",
			mimeType: "image/png",
			caption: "",
		});
		expect(toolImageSchema.parse({ ...block, alt: "", caption: null })).toEqual({
			type: "image",
			data: "AA",
			mimeType: "image/png",
			alt: "",
		});
	});

	test("tooLarge marks an image the client could not shrink", () => {
		const block = { type: "image", data: "", mimeType: "image/png", tooLarge: 3_000_000 };
		expect(toolImageSchema.parse(block).tooLarge).toBe(3_000_000);
		expect(toolImageSchema.safeParse({ ...block, tooLarge: -1 }).success).toBe(false);
	});

	test("an image block without data or type is reported, not dropped", () => {
		const blocks = readToolResult({
			content: [
				{ type: "image", mimeType: "image/png" },
				{ type: "image", data: "AA" },
			],
		});
		expect(blocks?.map((b) => b.kind)).toEqual(["invalid-image", "invalid-image"]);
		expect(toolResultImages({ content: [{ type: "image", data: "AA" }] })).toEqual([]);
	});

	test("other blocks and results without content are told apart", () => {
		expect(readToolResult({ content: [{ type: "resource", uri: "x" }, 3] })?.map((b) => b.kind)).toEqual([
			"other",
			"other",
		]);
		expect(readToolResult({ passed: 3 })).toBeNull();
		expect(readToolResult("plain text")).toBeNull();
		expect(readToolResult({ content: "x" })).toBeNull();
	});

	test("image types: the seven Chat shows, the usual other names, nothing else", () => {
		for (const type of [
			"image/png",
			"image/jpeg",
			"image/webp",
			"image/gif",
			"image/avif",
			"image/bmp",
			"image/x-icon",
		]) {
			expect(toolImageType(type)).toBe(type as never);
		}
		expect(toolImageType("image/jpg")).toBe("image/jpeg");
		expect(toolImageType("image/apng")).toBe("image/png");
		expect(toolImageType("image/x-ms-bmp")).toBe("image/bmp");
		expect(toolImageType("image/vnd.microsoft.icon")).toBe("image/x-icon");
		expect(toolImageType("image/svg+xml")).toBeNull();
		expect(toolImageType("text/html")).toBeNull();
	});
});
