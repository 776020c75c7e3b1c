import { describe, expect, test } from "bun:test";
import { codePointCount, codePointOffset, cutLine, utf8Length } from "./characters";

describe("counting", () => {
	test("UTF-8 bytes match TextEncoder, lone surrogates included", () => {
		for (const s of ["", "abc", "é", "漢字", "😀", "👩‍👩‍👧‍👦", "a\ud800b", "\udc00", "x😀"]) {
			expect(utf8Length(s, 0, s.length)).toBe(new TextEncoder().encode(s).length);
		}
	});

	test("characters are code points", () => {
		expect(codePointCount("a😀漢", 0, 4)).toBe(3);
		expect(codePointOffset("a😀漢", 0, 4, 2)).toBe(3);
		expect(codePointOffset("a😀漢", 0, 4, 3)).toBe(4);
		expect(codePointOffset("a😀漢", 0, 4, 4)).toBe(-1);
	});
});

describe("cutLine", () => {
	test("cuts after a space near the end when there is one", () => {
		const s = "one two three four";
		expect(s.slice(0, cutLine(s, 0, s.length, 12))).toBe("one two ");
	});

	test("never cuts inside a surrogate pair", () => {
		const s = "😀".repeat(100);
		for (let room = 1; room < 60; room++) {
			const cut = cutLine(s, 0, s.length, room);
			expect(cut % 2).toBe(0);
			expect(utf8Length(s, 0, cut)).toBeLessThanOrEqual(room);
		}
	});

	test("prefers a boundary between grapheme clusters", () => {
		const s = `${"x".repeat(40)}${"e\u0301".repeat(40)}`;
		for (let room = 45; room < 100; room++) {
			const cut = cutLine(s, 0, s.length, room);
			expect(s.charCodeAt(cut)).not.toBe(0x301);
		}
	});

	test("leaves at least one character, so a line break never follows alone", () => {
		expect(cutLine("abc", 0, 3, 100)).toBe(2);
		expect(cutLine("abc", 0, 3, 0)).toBe(0);
	});
});
