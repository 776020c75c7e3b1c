import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { createLogger } from "../log";
import { HttpError } from "./errors";
import { jsonResponse } from "./responses";
import { Router } from "./router";
import { API_CSP } from "./security-headers";

function setup(options: { origin?: string | (() => string); pageCsp?: string } = {}) {
	const lines: Record<string, unknown>[] = [];
	const log = createLogger({ write: (l) => lines.push(JSON.parse(l)) });
	const router = new Router({ maxBodyBytes: 1024, log, ...options });
	return { router, lines };
}

const get = (router: Router, path: string, init?: RequestInit) =>
	router.fetch(new Request(`http://chopin.test${path}`, init));

describe("routing", () => {
	test("matches literal paths and :params, decoded", async () => {
		const { router } = setup();
		router.get("/api/documents/:id", ({ params }) => jsonResponse({ id: params.id }));
		router.get("/api/documents/:id/images/:sha", ({ params }) => jsonResponse(params));
		expect(await (await get(router, "/api/documents/d%201")).json()).toEqual({ id: "d 1" });
		expect(await (await get(router, "/api/documents/d1/images/ab")).json()).toEqual({ id: "d1", sha: "ab" });
	});

	test("a literal segment wins over a parameter, and a parameter over a rest", async () => {
		const { router } = setup();
		router.get("/api/documents/:id", () => jsonResponse("param"));
		router.get("/api/*", () => jsonResponse("rest"));
		router.get("/api/documents/new", () => jsonResponse("literal"));
		expect(await (await get(router, "/api/documents/new")).json()).toBe("literal");
		expect(await (await get(router, "/api/documents/x")).json()).toBe("param");
		expect(await (await get(router, "/api/documents/x/y")).json()).toBe("rest");
	});

	test("a final * takes the rest of the path", async () => {
		const { router } = setup();
		router.get("/assets/*", ({ params }) => jsonResponse(params["*"]));
		expect(await (await get(router, "/assets/js/app.js")).json()).toBe("js/app.js");
		expect((await get(router, "/assets")).status).toBe(404);
	});

	test("an unknown path is 404 not-found as JSON; so are empty segments and undecodable paths", async () => {
		const { router } = setup();
		router.get("/api/documents/:id", () => jsonResponse({}));
		for (const path of [
			"/nope",
			"/api/documents",
			"/api/documents/",
			"/api/documents/%E0%A4%A",
			"/api/documents/a/b",
		]) {
			const res = await get(router, path);
			expect(res.status).toBe(404);
			expect(res.headers.get("content-type")).toContain("application/json");
			expect(await res.json()).toEqual({ code: "not-found", message: "There is nothing here." });
		}
	});

	test("a known path with another method is 405 with Allow", async () => {
		const { router } = setup();
		router.get("/api/documents/:id", () => jsonResponse({}));
		router.delete("/api/documents/:id", () => jsonResponse({}));
		const res = await get(router, "/api/documents/d1", { method: "PUT" });
		expect(res.status).toBe(405);
		expect(res.headers.get("allow")).toBe("DELETE, GET, HEAD");
		expect(await res.json()).toMatchObject({ code: "method-not-allowed" });
	});

	test("the method picks the route before the path's specificity does", async () => {
		const { router } = setup();
		router.get("/api/documents/new", () => jsonResponse("form"));
		router.post("/api/documents/:id", ({ params }) => jsonResponse(params.id));
		expect(await (await get(router, "/api/documents/new", { method: "POST" })).json()).toBe("new");
	});

	test("HEAD runs the GET route and sends no body", async () => {
		const { router } = setup();
		let calls = 0;
		router.get("/healthz", () => {
			calls += 1;
			return jsonResponse({ ok: true }, { headers: { "x-seen": "1" } });
		});
		const res = await get(router, "/healthz", { method: "HEAD" });
		expect(res.status).toBe(200);
		expect(res.headers.get("x-seen")).toBe("1");
		expect(await res.text()).toBe("");
		expect(calls).toBe(1);
	});

	test("registering the same method and pattern twice is a programming error", () => {
		const { router } = setup();
		router.get("/a/:x", () => jsonResponse({}));
		expect(() => router.get("/a/:y", () => jsonResponse({}))).toThrow(/already registered/);
		expect(() => router.get("no-slash", () => jsonResponse({}))).toThrow();
		expect(() => router.get("/a/*/b", () => jsonResponse({}))).toThrow();
	});
});

describe("errors", () => {
	test("an HttpError becomes its status and { code, message, hint } plus details", async () => {
		const { router } = setup();
		router.get("/x", () => {
			throw new HttpError(409, "document-archived", "The document is archived.", "Restore it first.", {
				id: "d1",
			});
		});
		const res = await get(router, "/x");
		expect(res.status).toBe(409);
		expect(await res.json()).toEqual({
			code: "document-archived",
			message: "The document is archived.",
			hint: "Restore it first.",
			id: "d1",
		});
	});

	test("anything else is 500 internal with no stack or cause in the body, and it is logged redacted", async () => {
		const { router, lines } = setup();
		const token = `ghp_${"q".repeat(36)}`;
		router.get("/boom", async () => {
			throw new TypeError(`cannot read property of undefined with ${token}`);
		});
		const res = await get(router, "/boom");
		expect(res.status).toBe(500);
		const text = await res.text();
		const body = JSON.parse(text);
		expect(body.code).toBe("internal");
		expect(typeof body.message).toBe("string");
		expect(text).not.toContain("TypeError");
		expect(text).not.toContain("at ");
		expect(text).not.toContain(token);
		expect(lines).toHaveLength(1);
		expect(lines[0]).toMatchObject({ level: "error", msg: "request failed", method: "GET", path: "/boom" });
		expect(JSON.stringify(lines[0])).toContain("cannot read property");
		expect(JSON.stringify(lines[0])).not.toContain(token);
	});
});

describe("headers", () => {
	test("every response has the security headers, errors included; API responses are not cached", async () => {
		const { router } = setup();
		router.get("/api/ok", () => jsonResponse({}));
		for (const path of ["/api/ok", "/missing"]) {
			const res = await get(router, path);
			expect(res.headers.get("x-content-type-options")).toBe("nosniff");
			expect(res.headers.get("referrer-policy")).toBe("same-origin");
			expect(res.headers.get("x-frame-options")).toBe("DENY");
			expect(res.headers.get("content-security-policy")).toBe(API_CSP);
			expect(res.headers.get("cache-control")).toBe("no-store");
		}
	});

	test("HTML gets the page CSP hook's policy, and a route's own headers are kept", async () => {
		const { router } = setup({ pageCsp: "default-src 'self'" });
		router.get("/", () => new Response("<!doctype html>", { headers: { "content-type": "text/html" } }));
		router.get(
			"/images/:name",
			() =>
				new Response("png", {
					headers: { "content-type": "image/png", "content-security-policy": "sandbox" },
				}),
		);
		router.get("/go", () => Response.redirect("http://chopin.test/", 302));
		expect((await get(router, "/")).headers.get("content-security-policy")).toBe("default-src 'self'");
		expect((await get(router, "/images/x.png")).headers.get("content-security-policy")).toBe("sandbox");
		const redirect = await get(router, "/go");
		expect(redirect.status).toBe(302);
		expect(redirect.headers.get("x-content-type-options")).toBe("nosniff");
	});
});

describe("the Origin check", () => {
	const origin = "https://chopin.example";

	test("a write from another origin is 403 origin-forbidden; our origin and no Origin pass", async () => {
		const { router } = setup({ origin });
		router.post("/api/things", () => jsonResponse({ ok: true }, { status: 201 }));
		const post = (headers: Record<string, string>) => get(router, "/api/things", { method: "POST", headers });
		const refused = await post({ origin: "https://evil.example" });
		expect(refused.status).toBe(403);
		expect(await refused.json()).toMatchObject({ code: "origin-forbidden" });
		expect((await post({ origin: "null" })).status).toBe(403);
		expect((await post({ origin })).status).toBe(201);
		expect((await post({})).status).toBe(201);
	});

	test("the origin may be a function, read at each request (PUBLIC_URL is final only once listening)", async () => {
		let current = "http://localhost:0";
		const { router } = setup({ origin: () => current });
		router.post("/api/things", () => jsonResponse({ ok: true }, { status: 201 }));
		current = origin;
		const res = await get(router, "/api/things", { method: "POST", headers: { origin } });
		expect(res.status).toBe(201);
		const refused = await get(router, "/api/things", {
			method: "POST",
			headers: { origin: "http://localhost:0" },
		});
		expect(await refused.json()).toMatchObject({ hint: `Open ${origin} instead.` });
	});

	test("reads are not checked (WebSocket routes check Origin themselves)", async () => {
		const { router } = setup({ origin });
		router.get("/api/things", () => jsonResponse([]));
		expect((await get(router, "/api/things", { headers: { origin: "https://evil.example" } })).status).toBe(
			200,
		);
	});
});

describe("bodies through the router", () => {
	test("ctx.json applies the router's limit and the schema", async () => {
		const { router } = setup();
		router.post("/api/echo", async (ctx) => jsonResponse(await ctx.json(z.object({ title: z.string() }))));
		const post = (body: string, type = "application/json") =>
			get(router, "/api/echo", { method: "POST", body, headers: { "content-type": type } });
		expect(await (await post('{"title":"x"}')).json()).toEqual({ title: "x" });
		expect((await post(JSON.stringify({ title: "x".repeat(2000) }))).status).toBe(413);
		expect((await post("{")).status).toBe(400);
		expect((await post('{"title":1}')).status).toBe(400);
		expect((await post("{}", "text/plain")).status).toBe(415);
	});

	test("without a server, upgrade() declines", async () => {
		const { router } = setup();
		router.get(
			"/ws",
			(ctx) => ctx.upgrade({ kind: "x" }) ?? jsonResponse({ code: "upgrade-failed" }, { status: 426 }),
		);
		expect((await get(router, "/ws")).status).toBe(426);
	});
});
