import { expect, test } from "bun:test";
import { clearCookie, readCookies, serializeCookie } from "./cookies";

test("reads the request's cookies by name", () => {
	const req = new Request("http://chopin.test/", {
		headers: { cookie: "chopin_session=abc123; theme=dark; broken" },
	});
	const cookies = readCookies(req);
	expect(cookies.get("chopin_session")).toBe("abc123");
	expect(cookies.get("theme")).toBe("dark");
	expect(readCookies(new Request("http://chopin.test/")).size).toBe(0);
});

test("cookies are HttpOnly, SameSite=Lax and Path=/; Secure only on an https PUBLIC_URL", () => {
	const local = serializeCookie("http://localhost:3000", "chopin_session", "abc", { maxAge: 3600 });
	expect(local).toContain("chopin_session=abc");
	expect(local).toContain("HttpOnly");
	expect(local).toContain("SameSite=Lax");
	expect(local).toContain("Path=/");
	expect(local).toContain("Max-Age=3600");
	expect(local).not.toContain("Secure");
	expect(serializeCookie("https://chopin.example", "s", "v")).toContain("Secure");
	expect(serializeCookie("https://chopin.example", "s", "v", { httpOnly: false })).not.toContain("HttpOnly");
});

test("clearing a cookie expires it at once", () => {
	expect(clearCookie("https://chopin.example", "chopin_session")).toMatch(/chopin_session=;.*Max-Age=0/);
});
