import { expect, test } from "bun:test";
import { inspect } from "node:util";
import { Secret } from "./secret";

test("a Secret shows [redacted] when printed, serialised or concatenated, and reveal() gives the value", () => {
	const holder = { token: new Secret("s3cr3t") };
	expect(JSON.stringify(holder)).toBe('{"token":"[redacted]"}');
	expect(inspect(holder)).not.toContain("s3cr3t");
	expect(Bun.inspect(holder)).not.toContain("s3cr3t");
	expect(`${holder.token}`).toBe("[redacted]");
	expect(holder.token.reveal()).toBe("s3cr3t");
});
