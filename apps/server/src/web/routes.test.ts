import { afterAll, beforeAll, expect, test } from "bun:test";
import { DEFAULT_PAGE_CSP } from "../http/security-headers";
import { createTestStore, type TestStore } from "../store/testing";
import { type ApiServer, createDocument, startApiServer } from "../testing/api-server";

let store: TestStore;
let api: ApiServer;
beforeAll(async () => {
	store = await createTestStore("sqlite");
	api = await startApiServer(store.store);
});
afterAll(async () => {
	await api.stop();
	await store.close();
});

test("pages send a signed-out person to sign in, and back afterwards", async () => {
	const id = await createDocument(api);
	for (const [path, next] of [
		["/", "/"],
		[`/d/${id}`, `/d/${id}`],
		["/machines", "/machines"],
		["/pair/prg_aaaaaaaaaaaaaaaa", "/pair/prg_aaaaaaaaaaaaaaaa"],
	]) {
		const res = await api.call(null, "GET", path!);
		expect(res.status).toBe(302);
		expect(res.headers.get("location")).toBe(`/sign-in?${new URLSearchParams({ next: next! })}`);
	}
});

test("every page is the bundled shell with the strict page policy and no inline script", async () => {
	const id = await createDocument(api);
	for (const [who, path] of [
		[null, "/sign-in"],
		["alice", "/"],
		["carol", `/d/${id}`],
		["bob", "/machines"],
		["bob", "/pair/prg_aaaaaaaaaaaaaaaa"],
	] as const) {
		const res = await api.call(who, "GET", path);
		expect(res.status).toBe(200);
		expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
		expect(res.headers.get("content-security-policy")).toBe(DEFAULT_PAGE_CSP);
		expect(res.headers.get("x-frame-options")).toBe("DENY");
		const html = await res.text();
		const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
		expect(scripts.length).toBe(1);
		for (const tag of scripts) expect(tag).toMatch(/ src="\/[^"]+\.js"/);
		expect(html).not.toMatch(/<script\b[^>]*>[^<]+<\/script>/);
		expect(html).not.toMatch(/ style=/);
	}
	expect(DEFAULT_PAGE_CSP).toContain("script-src 'self'");
	expect(DEFAULT_PAGE_CSP).toContain("frame-ancestors 'none'");
});

test("the shell's script and stylesheet (Bun's bundle) are served through the router", async () => {
	const html = await (await api.call(null, "GET", "/sign-in")).text();
	const script = /<script[^>]* src="([^"]+)"/.exec(html)![1]!;
	const style = /<link[^>]* href="([^"]+\.css)"/.exec(html)![1]!;
	const js = await fetch(new URL(script, api.server.url));
	expect(js.status).toBe(200);
	expect(js.headers.get("content-type")).toContain("javascript");
	const css = await fetch(new URL(style, api.server.url));
	expect(css.status).toBe(200);
	expect(css.headers.get("content-type")).toContain("text/css");
});

test("a path no page has is the usual 404", async () => {
	const res = await api.call("alice", "GET", "/nowhere");
	expect(res.status).toBe(404);
	expect(((await res.json()) as { code: string }).code).toBe("not-found");
});

test("the diagram renderer: its frame has a policy of its own, and its scripts are served from here", async () => {
	const frame = await api.call(null, "GET", "/_chopin/mermaid-frame");
	expect(frame.status).toBe(200);
	const csp = frame.headers.get("content-security-policy")!;
	expect(csp).toContain("script-src 'self'");
	expect(csp).toContain("frame-ancestors 'self'");
	expect(frame.headers.get("x-frame-options")).toBe("SAMEORIGIN");
	const html = await frame.text();
	expect(html).not.toMatch(/<script>[^<]/);
	for (const path of ["/_chopin/mermaid.js", "/_chopin/mermaid-frame.js"]) {
		const res = await api.call(null, "GET", path);
		expect(res.status).toBe(200);
		expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
		expect((await res.text()).length).toBeGreaterThan(100);
	}
	expect((await api.call(null, "GET", "/favicon.ico")).status).toBe(204);
});

test("every response carries the security headers: pages, chunks (200, 304, HEAD), the shell path, scripts, errors", async () => {
	const id = await createDocument(api);
	const html = await (await api.call(null, "GET", "/sign-in")).text();
	const chunks = [...html.matchAll(/ (?:src|href)="(\/chunk-[^"]+)"/g)].map((m) => m[1]!);
	expect(chunks.length).toBe(2);
	const first = await fetch(new URL(chunks[0]!, api.server.url));
	const etag = first.headers.get("etag")!;
	const responses: [string, Response][] = [["first chunk", first]];
	for (const chunk of chunks) {
		responses.push([`GET ${chunk}`, await fetch(new URL(chunk, api.server.url))]);
		responses.push([`HEAD ${chunk}`, await fetch(new URL(chunk, api.server.url), { method: "HEAD" })]);
	}
	const cached = await fetch(new URL(chunks[0]!, api.server.url), { headers: { "if-none-match": etag } });
	expect(cached.status).toBe(304);
	responses.push(["a 304 chunk", cached]);
	for (const [who, path] of [
		[null, "/_chopin/shell"],
		[null, "/chunk-nothere1.js"],
		[null, "/sign-in"],
		[null, "/"],
		["alice", `/d/${id}`],
		["bob", "/machines"],
		["bob", "/pair/prg_aaaaaaaaaaaaaaaa"],
		[null, "/_chopin/mermaid.js"],
		[null, "/_chopin/mermaid-frame.js"],
		[null, "/favicon.ico"],
		[null, "/healthz"],
		[null, "/nowhere"],
		["alice", "/api/me"],
	] as const) {
		responses.push([path, await api.call(who, "GET", path)]);
	}
	for (const [what, res] of responses) {
		const headers: Record<string, string | null> = { what };
		for (const name of ["x-content-type-options", "referrer-policy", "x-frame-options"])
			headers[name] = res.headers.get(name);
		expect(headers).toEqual({
			what,
			"x-content-type-options": "nosniff",
			"referrer-policy": "same-origin",
			"x-frame-options": "DENY",
		});
		expect(`${what}: ${res.headers.get("content-security-policy")}`).toContain("frame-ancestors 'none'");
		await res.body?.cancel();
	}
	// Chunks are Bun's hashed files: cached for good, with the type Bun gave them.
	expect(first.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
	expect(first.headers.get("content-type")).toMatch(/^text\/(css|javascript)/);
	// The shell is read inside the process only: it is no page of its own.
	expect((await api.call(null, "GET", "/_chopin/shell")).status).toBe(404);
});
