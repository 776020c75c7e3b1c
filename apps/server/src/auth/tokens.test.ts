import { expect, test } from "bun:test";
import { IdentityError } from "./errors";
import { parseBearer, randomToken, sameSecret, sha256Hex } from "./tokens";

test("random tokens are 32 bytes of base64url, never the same twice", () => {
	const a = randomToken();
	expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
	expect(Buffer.from(a, "base64url")).toHaveLength(32);
	expect(randomToken()).not.toBe(a);
});

test("sha256Hex and sameSecret", () => {
	expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	expect(sameSecret("ghu_same", "ghu_same")).toBe(true);
	expect(sameSecret("ghu_same", "ghu_other")).toBe(false);
	expect(sameSecret("", "x")).toBe(false);
});

test("parseBearer takes `Bearer <token>` and refuses a missing or malformed header as unauthorized", () => {
	expect(parseBearer("Bearer ghu_abc")).toBe("ghu_abc");
	expect(parseBearer("bearer   chopin_p_xyz ")).toBe("chopin_p_xyz");
	for (const header of [null, "", "   ", "Basic abc", "Bearer", "Bearer two words", "token ghu_abc"]) {
		let error: unknown;
		try {
			parseBearer(header);
		} catch (e) {
			error = e;
		}
		expect(error).toBeInstanceOf(IdentityError);
		expect((error as IdentityError).code).toBe("unauthorized");
	}
});
