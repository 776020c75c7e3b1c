import { describe, expect, test } from "bun:test";
import { cutText, MAX_TOOL_TEXT_CHARS, shownToolInput, shownToolResult } from "./work-details";

describe("Work details text", () => {
	test("long text is cut between code points, saying how much was left out", () => {
		const text = "😀".repeat(MAX_TOOL_TEXT_CHARS + 5);
		const cut = cutText(text);
		expect(cut).toBe(`${"😀".repeat(MAX_TOOL_TEXT_CHARS)}\n… (5 more characters not shown)`);
		expect(cutText("short")).toBe("short");
	});

	test("input is masked whether it comes as JSON text or a value", () => {
		expect(shownToolInput('{"token":"abc123"}')).toBe('{"token":"[redacted]"}');
		expect(shownToolInput({ url: "https://u:p@host/x" })).toBe('{"url":"https://[redacted]@host/x"}');
		expect(shownToolInput(undefined)).toBe("undefined");
	});

	test("results: running while preliminary, an error envelope only when failed and final", () => {
		const envelope = { error: { code: "rate-limited", message: "Try later" } };
		expect(shownToolResult(envelope, { preliminary: true, isError: true })).toEqual({
			status: "running",
			result: JSON.stringify(envelope),
			imageCount: 0,
		});
		expect(shownToolResult(envelope, {})).toEqual({
			status: "done",
			result: JSON.stringify(envelope),
			imageCount: 0,
		});
		expect(shownToolResult(JSON.stringify(envelope), { isError: true })).toEqual({
			status: "failed",
			error: { label: "rate-limited", message: "Try later" },
			imageCount: 0,
		});
		expect(shownToolResult("plain failure", { isError: true })).toEqual({
			status: "failed",
			error: { label: "Failed", message: "plain failure" },
			imageCount: 0,
		});
	});

	test("a failed or preliminary content result counts its images but stores none", () => {
		const content = { content: [{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }] };
		const failed = shownToolResult(content, { isError: true });
		expect(failed).toMatchObject({ status: "failed", imageCount: 1 });
		expect(failed.images).toBeUndefined();
		expect(shownToolResult(content, { preliminary: true }).images).toBeUndefined();
	});
});
