import { describe, expect, test } from "bun:test";
import {
	base64DecodedLength,
	codePointLength,
	cutNote,
	cutToCodePoints,
	isBase64,
	utf8ByteLength,
} from "./text";

const samples = [
	"",
	"a",
	"é",
	"€",
	"😀",
	"a😀é€",
	"\ud800",
	"x\udc00y",
	"\ud83d",
	"😀".repeat(10),
	"日本語テキスト",
];

describe("counting text", () => {
	test("codePointLength counts code points, as [...text] does", () => {
		for (const text of samples) expect(codePointLength(text)).toBe([...text].length);
	});

	test("codePointLength stops just past a limit", () => {
		expect(codePointLength("a".repeat(1000), 10)).toBe(11);
		expect(codePointLength("😀".repeat(1000), 10)).toBe(11);
		expect(codePointLength("😀".repeat(10), 10)).toBe(10);
	});

	test("utf8ByteLength matches TextEncoder, lone surrogates included", () => {
		const encoder = new TextEncoder();
		for (const text of samples) expect(utf8ByteLength(text)).toBe(encoder.encode(text).byteLength);
	});

	test("utf8ByteLength stops just past a limit", () => {
		expect(utf8ByteLength("€".repeat(100), 10)).toBe(12);
		expect(utf8ByteLength("abc", 10)).toBe(3);
	});

	test("cutToCodePoints never splits a pair", () => {
		expect(cutToCodePoints("😀😀😀", 2)).toBe("😀😀");
		expect(cutToCodePoints("ab", 5)).toBe("ab");
		expect(cutNote("é".repeat(5000))).toBe("é".repeat(4000));
		expect(codePointLength(cutNote("😀".repeat(4001)))).toBe(4000);
	});

	test("base64DecodedLength matches the decoded bytes, with or without padding", () => {
		for (let n = 0; n < 10; n++) {
			const encoded = Buffer.alloc(n, 1).toString("base64");
			expect(base64DecodedLength(encoded)).toBe(n);
			expect(base64DecodedLength(encoded.replace(/=+$/, ""))).toBe(n);
			expect(isBase64(encoded)).toBe(true);
			expect(isBase64(encoded.replace(/=+$/, ""))).toBe(true);
		}
		for (const bad of ["a", "ab=c", "a-b_", "abc==", "ab cd", "QQ=", "====", "a==="])
			expect(isBase64(bad)).toBe(false);
	});
});
