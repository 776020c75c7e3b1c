import { expect, test } from "bun:test";
import { CODE_PATTERN, describeClient, isLocalPath, normaliseCode, retrySeconds } from "./machine-text";

test("a typed code becomes the server's form: capitals, one dash; anything else stays to be refused", () => {
	expect(normaliseCode("abcd-2345")).toBe("ABCD-2345");
	expect(normaliseCode(" abcd 2345 ")).toBe("ABCD-2345");
	expect(normaliseCode("ABCD2345")).toBe("ABCD-2345");
	expect(normaliseCode("ab-cd-23-45")).toBe("ABCD-2345");
	expect(CODE_PATTERN.test(normaliseCode("abcd-2345"))).toBe(true);
	// Too short, and letters the alphabet leaves out (I, O, 0, 1), are not codes.
	expect(CODE_PATTERN.test(normaliseCode("abc"))).toBe(false);
	expect(CODE_PATTERN.test(normaliseCode("ABCD-2341"))).toBe(false);
	expect(CODE_PATTERN.test(normaliseCode("OBCD-2345"))).toBe(false);
});

test("the client in words", () => {
	expect(describeClient({ version: "1.2.3", os: "darwin", arch: "arm64", install: "script" })).toBe(
		"chopin 1.2.3 on darwin-arm64, installed with the install script",
	);
	expect(describeClient({ version: "1.2.3", os: "linux", arch: "x64", install: "pnpm" })).toBe(
		"chopin 1.2.3 on linux-x64, installed with pnpm",
	);
});

test("a rate limit's wait comes from the body, else a minute", () => {
	expect(retrySeconds({ retryAfter: 6 })).toBe(6);
	expect(retrySeconds({ retryAfter: "x" })).toBe(60);
	expect(retrySeconds(undefined)).toBe(60);
});

test("the browser follows only a path on this origin", () => {
	expect(isLocalPath("/auth/github/start?intent=machine-pairing&next=%2Fpair%2Fprg_x")).toBe(true);
	expect(isLocalPath("//evil.example/")).toBe(false);
	expect(isLocalPath("https://evil.example/")).toBe(false);
	expect(isLocalPath("/\\evil.example")).toBe(false);
});
