import { describe, expect, test } from "bun:test";
import { CliError } from "../program/errors";
import {
	checkServerOrigin,
	isLoopbackHost,
	parseServerOrigin,
	serverOriginSchema,
	storedOriginSchema,
} from "./server-origin";

const origin = (input: string) => checkServerOrigin(input);

describe("checkServerOrigin", () => {
	test.each([
		["https://chopin.example", "https://chopin.example"],
		["https://chopin.example/", "https://chopin.example"],
		["HTTPS://Chopin.Example:443", "https://chopin.example"],
		["https://chopin.example:8443", "https://chopin.example:8443"],
		["  https://chopin.example  ", "https://chopin.example"],
		["http://localhost:3000", "http://localhost:3000"],
		["http://127.0.0.1:3000", "http://127.0.0.1:3000"],
		["http://127.1.2.3", "http://127.1.2.3"],
		["http://127.1", "http://127.0.0.1"],
		["http://[::1]:8080", "http://[::1]:8080"],
		["http://[0:0:0:0:0:0:0:1]", "http://[::1]"],
		["http://[::ffff:127.0.0.1]:80", "http://[::ffff:7f00:1]"],
		["https://[2001:db8::1]", "https://[2001:db8::1]"],
	])("%s is the origin %s", (input, expected) => {
		expect(origin(input)).toEqual({ ok: true, origin: expected });
	});

	test.each([
		["", "is empty"],
		["chopin.example", "has no scheme"],
		["//chopin.example", "has no scheme"],
		["ftp://chopin.example", "must use https:"],
		["ws://localhost:3000", "must use https:"],
		["https://user:pass@chopin.example", "user name or password"],
		["https://token@chopin.example", "user name or password"],
		["https://chopin.example/app", "without a path"],
		["https://chopin.example/?x=1", "without a path"],
		["https://chopin.example?", "without a path"],
		["https://chopin.example#top", "without a path"],
		["https://", "not a valid URL"],
	])("%j is server-url-invalid (%s)", (input, fragment) => {
		const result = origin(input);
		expect(result.ok).toBe(false);
		if (result.ok) return;
		expect(result.code).toBe("server-url-invalid");
		expect(result.message).toContain(fragment);
		expect(result.hint.length).toBeGreaterThan(0);
	});

	test.each([
		"http://chopin.example",
		"http://10.0.0.5:3000",
		"http://128.0.0.1",
		"http://localhost.example.com",
		"http://app.localhost",
		"http://[::2]",
		"http://[::ffff:a00:1]",
	])("%s is server-url-insecure", (input) => {
		const result = origin(input);
		expect(result).toMatchObject({ ok: false, code: "server-url-insecure" });
		if (!result.ok) expect(result.hint).toStartWith("Use https://");
	});

	test("the no-scheme hint shows the https form", () => {
		expect(origin("chopin.example")).toMatchObject({ hint: "Include it: --server https://chopin.example" });
	});
});

describe("parseServerOrigin and the schemas", () => {
	test("parseServerOrigin throws the coded CliError", () => {
		expect(parseServerOrigin("https://a.example/")).toBe("https://a.example");
		try {
			parseServerOrigin("http://a.example");
			throw new Error("expected a refusal");
		} catch (error) {
			expect(error).toBeInstanceOf(CliError);
			expect(error).toMatchObject({ code: "server-url-insecure", exitCode: 2 });
		}
	});

	test("serverOriginSchema transforms, or carries the code", () => {
		expect(serverOriginSchema.parse("https://a.example/")).toBe("https://a.example");
		const result = serverOriginSchema.safeParse("https://a.example/x");
		expect(result.success).toBe(false);
		expect(result.error?.issues[0]).toMatchObject({ params: { code: "server-url-invalid" } });
	});

	test("storedOriginSchema accepts only a normalised origin", () => {
		expect(storedOriginSchema.safeParse("https://a.example").success).toBe(true);
		expect(storedOriginSchema.safeParse("https://a.example/").success).toBe(false);
		expect(storedOriginSchema.safeParse("http://a.example").success).toBe(false);
	});

	test("isLoopbackHost", () => {
		expect(isLoopbackHost("LOCALHOST")).toBe(true);
		expect(isLoopbackHost("127.255.255.254")).toBe(true);
		expect(isLoopbackHost("127.0.0.256")).toBe(false);
		expect(isLoopbackHost("::1")).toBe(false); // URL hostnames keep the brackets
	});
});
