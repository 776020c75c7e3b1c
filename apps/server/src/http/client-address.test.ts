import { describe, expect, test } from "bun:test";
import { clientAddress, type ProxyTrust } from "./client-address";

const trust: ProxyTrust = { header: "x-forwarded-for", proxies: new Set(["10.0.0.2", "10.0.0.3"]) };
const headers = (value?: string) => new Headers(value === undefined ? {} : { "x-forwarded-for": value });

describe("clientAddress", () => {
	test("without trust, or from a peer that is not a trusted proxy, the header is ignored", () => {
		expect(clientAddress(headers("1.2.3.4"), "10.0.0.2", undefined)).toBe("10.0.0.2");
		expect(clientAddress(headers("1.2.3.4"), "10.0.0.9", trust)).toBe("10.0.0.9");
		expect(clientAddress(headers(), undefined, trust)).toBe("unknown");
	});

	test("from a trusted proxy: the rightmost address no trusted proxy wrote, never what the client put first", () => {
		expect(clientAddress(headers("1.2.3.4"), "10.0.0.2", trust)).toBe("1.2.3.4");
		expect(clientAddress(headers("6.6.6.6, 1.2.3.4"), "10.0.0.2", trust)).toBe("1.2.3.4");
		expect(clientAddress(headers("6.6.6.6, 1.2.3.4, 10.0.0.3"), "::ffff:10.0.0.2", trust)).toBe("1.2.3.4");
		expect(clientAddress(headers("[2001:DB8::1]:4711"), "10.0.0.2", trust)).toBe("2001:db8::1");
		expect(clientAddress(headers("1.2.3.4:5678"), "10.0.0.2", trust)).toBe("1.2.3.4");
	});

	test("a missing or malformed header counts as the proxy's own address", () => {
		expect(clientAddress(headers(), "10.0.0.2", trust)).toBe("10.0.0.2");
		expect(clientAddress(headers("not-an-ip"), "10.0.0.2", trust)).toBe("10.0.0.2");
		expect(clientAddress(headers("10.0.0.3"), "10.0.0.2", trust)).toBe("10.0.0.3");
	});
});
