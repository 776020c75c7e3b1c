import { expect, test } from "bun:test";
import { createRedactor, redactTokens } from "./redact";

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
