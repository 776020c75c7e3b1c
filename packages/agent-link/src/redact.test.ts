import { describe, expect, test } from "bun:test";
import { createRedactor, REDACTED, redactTokens } from "./redact";

const planner = `chopin_p_${"A".repeat(43)}`;
const machine = `chopin_m_${"b".repeat(43)}`;

test("token shapes are masked wherever they appear", () => {
	const line = `got ${planner} and ${machine}, ghp_${"x".repeat(36)} github_pat_${"y".repeat(40)} Authorization: Bearer abc.def`;
	const out = redactTokens(line);
	expect(out).not.toContain("AAAA");
	expect(out).not.toContain("bbbb");
	expect(out).not.toContain("xxxx");
	expect(out).not.toContain("yyyy");
	expect(out).not.toContain("abc.def");
	expect(out).toContain("Bearer [redacted]");
});

test("given secrets are masked, the longest first", () => {
	const redact = createRedactor(["hunter2-long", "hunter2", "x"]);
	expect(redact("a hunter2-long b hunter2 x")).toBe("a [redacted] b [redacted] x");
});

test("prose about bearer tokens is left alone; a bearer credential is not", () => {
	expect(redactTokens("Check the bearer token you gave; send a Bearer credential.")).toBe(
		"Check the bearer token you gave; send a Bearer credential.",
	);
	expect(redactTokens("authorization: bearer tokenvalue123")).toBe("authorization: Bearer [redacted]");
});

describe("a secret in the forms a program prints it in", () => {
	const secret = 'sek"rit/va lue+42&é';
	const redact = createRedactor([secret]);
	const masked = (line: string) => {
		const out = redact(line);
		expect(out).toContain(REDACTED);
		return out;
	};
	const b64 = (text: string) => Buffer.from(text).toString("base64");

	test("JSON-escaped, also with \\/ and \\u escapes (ensure_ascii)", () => {
		expect(masked(`{"key":${JSON.stringify(secret)}}`)).toBe(`{"key":"${REDACTED}"}`);
		const asciiJson = JSON.stringify(secret)
			.slice(1, -1)
			.replace(/\//g, "\\/")
			.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
		expect(masked(`{"key":"${asciiJson}"}`)).toBe(`{"key":"${REDACTED}"}`);
	});

	test("URL-encoded (encodeURIComponent, and a form's + for space)", () => {
		expect(masked(`GET /x?key=${encodeURIComponent(secret)}&y=1`)).toBe(`GET /x?key=${REDACTED}&y=1`);
		const form = new URLSearchParams({ key: secret }).toString();
		expect(masked(`body ${form}`)).toBe(`body key=${REDACTED}`);
	});

	test("base64 and base64url, whole or inside a longer encoding (Basic user:secret)", () => {
		expect(masked(`value ${b64(secret)}`)).toBe(`value ${REDACTED}`);
		expect(masked(`value ${Buffer.from(secret).toString("base64url")}`)).toBe(`value ${REDACTED}`);
		for (const prefix of ["user:", "ab:", "a:"]) {
			const basic = b64(`${prefix}${secret}`);
			const out = masked(`Authorization: Basic ${basic}`);
			// At most the characters that also carry the neighbours' bits are left.
			expect(out.replace(REDACTED, "").length).toBeLessThan(`Authorization: Basic ${basic}`.length - 16);
		}
	});

	test("an issued token, base64- or URL-encoded", () => {
		const token = `chopin_p_${"Q".repeat(20)}${"z9-_".repeat(6)}`;
		const withToken = createRedactor([token]);
		expect(withToken(`t=${b64(token)}`)).toBe(`t=${REDACTED}`);
		expect(withToken(`t=${encodeURIComponent(token)}`)).toBe(`t=${REDACTED}`);
		expect(withToken(`t=${Buffer.from(token).toString("base64url")}`)).toBe(`t=${REDACTED}`);
	});

	test("percent-encoding beyond encodeURIComponent's: every character, or encoded twice; token shapes too", () => {
		const token = `chopin_p_${"Q".repeat(20)}${"z9-_".repeat(6)}`;
		const all = (text: string) =>
			[...text].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`).join("");
		expect(redact(`?t=${token.replaceAll("_", "%5F")}&n=1`)).toBe(`?t=${REDACTED}&n=1`);
		expect(redact(`?t=${token.replaceAll("_", "%255F")} next`)).toBe(`?t=${REDACTED} next`);
		expect(redact(`/x/${all(token)}/y`)).toBe(`/x/${REDACTED}/y`);
		expect(masked(`v=${all(secret)}`)).toBe(`v=${REDACTED}`);
		// A percent sign in prose, or an encoded value that is no secret, stays.
		expect(redact("100% sure; 50%5F off; %zz; a%20b")).toBe("100% sure; 50%5F off; %zz; a%20b");
	});

	test("ordinary text with short base64 runs is left alone", () => {
		expect(redact("the build passed in 42 s; see /var/log/x and dXNlcg==")).toBe(
			"the build passed in 42 s; see /var/log/x and dXNlcg==",
		);
	});
});
