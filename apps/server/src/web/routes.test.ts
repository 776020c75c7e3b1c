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

test("the shell's script and stylesheet are served by Bun beside it", async () => {
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
