import { afterEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { JSON_TOO_DEEP_MESSAGE, MAX_JSON_DEPTH } from "@chopin/agent-link/json-depth";
import { z } from "zod";
import { jsonResponse } from "./http/responses";
import type { Socket } from "./http/sockets";
import { postgresUnavailable, REQUIRE_ALL } from "./store/testing";
import { startTestServer, type TestServer } from "./testing/server";
import { VERSION } from "./version";

const open: TestServer[] = [];
afterEach(async () => {
	await Promise.all(open.splice(0).map((s) => s.close()));
});

async function serve(options: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
	const server = await startTestServer(options);
	open.push(server);
	return server;
}

/** A WebSocket client whose messages and close can be awaited. */
async function connect(url: string) {
	const ws = new WebSocket(url);
	const queue: string[] = [];
	const waiting: ((message: string) => void)[] = [];
	ws.onmessage = (e) => {
		const next = waiting.shift();
		if (next) next(String(e.data));
		else queue.push(String(e.data));
	};
	const closed = new Promise<{ code: number; reason: string }>((resolve) => {
		ws.onclose = (e) => resolve({ code: e.code, reason: e.reason });
	});
	await new Promise<void>((resolve, reject) => {
		ws.onopen = () => resolve();
		ws.onerror = () => reject(new Error("the WebSocket did not open"));
	});
	const nextMessage = () =>
		queue.length ? Promise.resolve(queue.shift()!) : new Promise<string>((resolve) => waiting.push(resolve));
	return { ws, closed, nextMessage };
}

/** A promise with its resolve function, for waiting on a server-side event. */
function signal<T = void>() {
	let resolve!: (value: T) => void;
	const promise = new Promise<T>((r) => {
		resolve = r;
	});
	return { promise, resolve };
}

const skipPostgres = postgresUnavailable !== undefined && !REQUIRE_ALL;

describe("a real server", () => {
	test("answers /healthz over the network with the version and the store", async () => {
		const server = await serve();
		const res = await fetch(`${server.url}/healthz`);
		expect(res.status).toBe(200);
		expect(res.headers.get("cache-control")).toBe("no-store");
		expect(res.headers.get("x-content-type-options")).toBe("nosniff");
		expect(await res.json()).toEqual({ ok: true, version: VERSION, store: "sqlite" });
		expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
	});

	test("on port 0, the default PUBLIC_URL names the real port", async () => {
		const server = await serve();
		expect(server.context.config.publicUrl).toBe(`http://localhost:${server.port}`);
		const explicit = await serve({ env: { PUBLIC_URL: "https://chopin.example" } });
		expect(explicit.context.config.publicUrl).toBe("https://chopin.example");
	});

	test("restarts on the same port with the same data, and stop is idempotent", async () => {
		const clock = new ManualClock(Date.UTC(2026, 3, 1));
		const server = await serve({ clock });
		const { port } = server;
		const key = Buffer.from(server.context.secretKey.reveal()).toString("hex");
		await server.context.store
			.sql`INSERT INTO users ${server.context.store.sql({ login: "octocat", created_at: clock.now() })}`;

		const publicUrl = server.context.config.publicUrl;
		await server.restart();
		expect(server.port).toBe(port);
		expect(server.context.config.publicUrl).toBe(publicUrl);
		expect(Buffer.from(server.context.secretKey.reveal()).toString("hex")).toBe(key);
		expect(server.context.clock).toBe(clock);
		const row = await server.context.store.one(server.context.store.sql`SELECT login, created_at FROM users`);
		expect(row).toEqual({ login: "octocat", created_at: Date.UTC(2026, 3, 1) });
		expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

		await server.close();
		await server.close();
		await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
	});

	test.skipIf(skipPostgres)("runs on PostgreSQL and keeps its data across a restart", async () => {
		const server = await serve({ store: "postgres" });
		expect(await (await fetch(`${server.url}/healthz`)).json()).toMatchObject({
			ok: true,
			store: "postgres",
		});
		await server.context.store
			.sql`INSERT INTO repositories ${server.context.store.sql({ full_name: "octo/kept", owner: "octo", name: "kept", created_at: 1 })}`;
		await server.restart();
		expect(
			await server.context.store.one(
				server.context.store.sql`SELECT full_name FROM repositories WHERE full_name = ${"octo/kept"}`,
			),
		).toEqual({ full_name: "octo/kept" });
	});

	test("a JSON route refuses an oversized, mistyped or invalid body over the network", async () => {
		const server = await serve({
			env: { MAX_BODY_BYTES: "1024" },
			register: (router) =>
				router.post("/api/echo", async (ctx) =>
					jsonResponse(await ctx.json(z.object({ title: z.string() }))),
				),
		});
		const post = (body: string, type = "application/json") =>
			fetch(`${server.url}/api/echo`, { method: "POST", body, headers: { "content-type": type } });
		expect(await (await post('{"title":"ok"}')).json()).toEqual({ title: "ok" });
		const big = await post(JSON.stringify({ title: "x".repeat(5000) }));
		expect(big.status).toBe(413);
		expect(await big.json()).toMatchObject({ code: "body-too-large" });
		expect((await post("{", "application/json")).status).toBe(400);
		expect((await post("{}", "text/plain")).status).toBe(415);
		expect(await (await post("{}")).json()).toMatchObject({ code: "invalid-request", field: "title" });
		const foreign = await fetch(`${server.url}/api/echo`, {
			method: "POST",
			body: '{"title":"x"}',
			headers: { "content-type": "application/json", origin: "https://evil.example" },
		});
		expect(foreign.status).toBe(403);
	});

	test("a JSON body nested deeper than 128 levels is 400 json-too-deep, not a stack overflow", async () => {
		const server = await serve({
			register: (router) =>
				router.post("/api/any", async (ctx) => jsonResponse({ value: await ctx.json(z.json()) })),
		});
		const post = (body: string) =>
			fetch(`${server.url}/api/any`, {
				method: "POST",
				body,
				headers: { "content-type": "application/json" },
			});
		const deep = await post(`${"[".repeat(9000)}${"]".repeat(9000)}`);
		expect(deep.status).toBe(400);
		expect(await deep.json()).toEqual({
			code: "json-too-deep",
			message: JSON_TOO_DEEP_MESSAGE,
			hint: "Send the data with less nesting.",
		});
		const atLimit = `${"[".repeat(MAX_JSON_DEPTH)}${"]".repeat(MAX_JSON_DEPTH)}`;
		expect((await post(atLimit)).status).toBe(200);
	});

	test("a failing route is 500 internal for the client and an error line in the log", async () => {
		const server = await serve({
			register: (router) =>
				router.get("/api/fail", () => {
					throw new Error("disk on fire");
				}),
		});
		const res = await fetch(`${server.url}/api/fail`);
		expect(res.status).toBe(500);
		expect(await res.text()).not.toContain("disk on fire");
		expect(
			server.logs.some((l) => l.msg === "request failed" && JSON.stringify(l).includes("disk on fire")),
		).toBe(true);
	});
});

describe("WebSockets", () => {
	test("a route upgrades with a kind, and that kind's handlers get the socket's events", async () => {
		const events: string[] = [];
		const serverSawClose = signal();
		const server = await serve({
			register: (router, ctx) => {
				ctx.sockets.register<{ kind: "echo"; who: string }>("echo", {
					open: (ws) => {
						events.push(`open ${ws.data.who}`);
					},
					message: (ws, message) => {
						ws.send(`${ws.data.who}: ${String(message)}`);
					},
					close: (ws, code) => {
						events.push(`close ${ws.data.who} ${code}`);
						serverSawClose.resolve();
					},
				});
				router.get(
					"/ws/echo",
					(c) =>
						c.upgrade({ kind: "echo", who: c.url.searchParams.get("who") ?? "?" }) ??
						jsonResponse({}, { status: 400 }),
				);
			},
		});
		const client = await connect(`${server.url.replace("http", "ws")}/ws/echo?who=ada`);
		client.ws.send("hello");
		expect(await client.nextMessage()).toBe("ada: hello");
		client.ws.close(1000);
		await client.closed;
		await serverSawClose.promise;
		expect(events).toEqual(["open ada", "close ada 1000"]);
		expect(server.context.sockets.open.size).toBe(0);
	});

	test("stopping runs onStop hooks first (latest first), then closes remaining sockets with 1012", async () => {
		const order: string[] = [];
		const opened = signal<Socket>();
		const server = await serve({
			register: (router, ctx) => {
				ctx.sockets.register("plain", { open: (ws) => opened.resolve(ws) });
				router.get("/test/ws", (c) => c.upgrade({ kind: "plain" }) ?? jsonResponse({}, { status: 400 }));
				ctx.onStop(() => void order.push("first registered"));
				ctx.onStop(async () => {
					order.push(`second registered, ${ctx.sockets.open.size} socket open`);
				});
			},
		});
		const client = await connect(`${server.url.replace("http", "ws")}/test/ws`);
		await opened.promise;
		await server.close();
		expect(await client.closed).toEqual({ code: 1012, reason: "server restarting" });
		expect(order).toEqual(["second registered, 1 socket open", "first registered"]);
	});

	test("a handler that throws closes its socket with 1011 and is logged", async () => {
		const server = await serve({
			register: (router, ctx) => {
				ctx.sockets.register("bad", {
					message: () => {
						throw new Error("handler bug");
					},
				});
				router.get("/test/ws", (c) => c.upgrade({ kind: "bad" }) ?? jsonResponse({}, { status: 400 }));
			},
		});
		const client = await connect(`${server.url.replace("http", "ws")}/test/ws`);
		client.ws.send("x");
		expect((await client.closed).code).toBe(1011);
		expect(server.logs.some((l) => l.msg === "socket handler failed")).toBe(true);
	});
});
