import { afterEach, beforeEach, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import type { Env } from "../config";
import type { StartOverrides } from "../server";
import { describeStores, type StoreFixture } from "../store/testing";
import { signInLocally } from "../testing/sign-in";
import { type StoreServer, startStoreServer } from "../testing/store-server";
import { requireUser } from "./guards";
import { SIGN_IN_LIMIT } from "./local-routes";

const ACCOUNTS = JSON.stringify({
	users: [
		{ login: "alice", name: "Alice", password: "alice-password" },
		{ login: "bob", passwordHash: await Bun.password.hash("bob-password") },
		{ login: "dave" },
	],
	repositories: { "acme/app": { alice: "admin" } },
	organizations: { acme: ["alice", "bob"] },
});

let clock: ManualClock;
let servers: StoreServer[];

beforeEach(() => {
	clock = new ManualClock();
	servers = [];
});

afterEach(async () => {
	for (const s of servers) await s.stop();
});

/** A page that needs a signed-in person, as the pages will. */
const page: StartOverrides["register"] = (router, ctx) => {
	router.get("/plans/:id", async ({ req }) => {
		await requireUser(ctx, req);
		return new Response("<p>plan</p>", { headers: { "content-type": "text/html" } });
	});
};

async function serve(t: StoreFixture, env: Env = {}) {
	const server = await startStoreServer({
		store: t.store,
		clock,
		env: { AUTH_MODE: "local", LOCAL_ACCOUNTS: ACCOUNTS, ...env },
		register: page,
	});
	servers.push(server);
	return server;
}

describeStores("local sign-in", (t) => {
	test("with a password, a password hash, or none; /api/me then answers in local mode", async () => {
		const server = await serve(t);
		const alice = await signInLocally(server, "alice", "alice-password");
		expect(alice.res.status).toBe(200);
		expect(await alice.res.json()).toEqual({ login: "alice", name: "Alice", avatarUrl: null, mode: "local" });
		const cookie = alice.res.headers.get("set-cookie")!;
		for (const flag of ["HttpOnly", "SameSite=Lax", "Path=/"]) expect(cookie).toContain(flag);
		expect(cookie).not.toContain("Secure");
		expect(await (await server.get("/api/me", alice.jar)).json()).toEqual({
			login: "alice",
			name: "Alice",
			avatarUrl: null,
			mode: "local",
		});
		expect((await signInLocally(server, "bob", "bob-password")).res.status).toBe(200);
		const dave = await signInLocally(server, "Dave");
		expect(await dave.res.json()).toMatchObject({ login: "dave" });
		expect(server.context.sessions.liveSignIn("dave")).not.toBeNull();
		expect(server.context.sessions.liveSignIn("alice")?.authorization.kind).toBe("local");
	});

	test("a wrong or missing password, or an unknown login, is 401 invalid-credentials and makes no session", async () => {
		const server = await serve(t);
		for (const [login, password] of [
			["alice", "nope"],
			["alice", undefined],
			["bob", "alice-password"],
			["zed", undefined],
		] as const) {
			const { res, jar } = await signInLocally(server, login, password);
			expect(res.status).toBe(401);
			expect(await res.json()).toMatchObject({
				code: "invalid-credentials",
				message: "The login or password is wrong.",
			});
			expect(jar.get("chopin_session")).toBeUndefined();
		}
		expect(await t.store.many(t.store.sql`SELECT id_digest FROM browser_sessions`)).toEqual([]);
		const bad = await server.post("/auth/local/sign-in", { login: "alice", extra: 1 });
		expect(await bad.json()).toMatchObject({ code: "invalid-request", field: "extra" });
	});

	test("ADMIT applies to local accounts too: 403 not-admitted", async () => {
		const server = await serve(t, { ADMIT: "org:acme" });
		expect((await signInLocally(server, "alice", "alice-password")).res.status).toBe(200);
		const dave = await signInLocally(server, "dave");
		expect(dave.res.status).toBe(403);
		expect(await dave.res.json()).toMatchObject({ code: "not-admitted" });
	});

	test("attempts are rate limited per address: 429 rate-limited with Retry-After, and refilled by the clock", async () => {
		const server = await serve(t);
		// Over real HTTP, so the limiter sees the connecting address.
		const attempt = () =>
			fetch(`${server.url}/auth/local/sign-in`, {
				method: "POST",
				headers: { "content-type": "application/json" },
				body: JSON.stringify({ login: "alice", password: "guess" }),
			});
		for (let i = 0; i < SIGN_IN_LIMIT.capacity; i++) expect((await attempt()).status).toBe(401);
		const limited = await attempt();
		expect(limited.status).toBe(429);
		expect(limited.headers.get("retry-after")).toBe(String(SIGN_IN_LIMIT.refillMs / 1000));
		expect(await limited.json()).toMatchObject({
			code: "rate-limited",
			retryAfter: SIGN_IN_LIMIT.refillMs / 1000,
		});
		// Even the right password waits its turn.
		const right = await fetch(`${server.url}/auth/local/sign-in`, {
			method: "POST",
			headers: { "content-type": "application/json" },
			body: JSON.stringify({ login: "alice", password: "alice-password" }),
		});
		expect(right.status).toBe(429);
		await clock.advance(SIGN_IN_LIMIT.refillMs);
		expect((await attempt()).status).toBe(401);
		expect((await attempt()).status).toBe(429);
	});

	test("sign-out clears liveness and fires onSignOut; an expired session is refused (SESSION_TTL_MS)", async () => {
		const server = await serve(t, { SESSION_TTL_MS: "3600000" });
		const { jar, res } = await signInLocally(server, "alice", "alice-password");
		expect(res.headers.get("set-cookie")).toContain("Max-Age=3600");
		const events: string[] = [];
		server.context.sessions.onSignOut((login) => events.push(`out:${login}`));
		server.context.sessions.onSessionExpired((login, _id, reason) => events.push(`${reason}:${login}`));
		expect((await server.post("/auth/sign-out", undefined, jar)).status).toBe(204);
		expect(events).toEqual(["out:alice"]);
		expect(server.context.sessions.liveSignIn("alice")).toBeNull();
		expect((await server.get("/api/me", jar)).status).toBe(401);

		const again = await signInLocally(server, "alice", "alice-password");
		await clock.advance(3_600_000);
		expect(events).toEqual(["out:alice", "expired:alice"]);
		expect(server.context.sessions.liveSignIn("alice")).toBeNull();
		expect((await server.get("/api/me", again.jar)).status).toBe(401);
	});

	test("on an https PUBLIC_URL the session cookie is Secure; pages redirect to /sign-in", async () => {
		const server = await serve(t, { PUBLIC_URL: "https://chopin.example" });
		const { res } = await signInLocally(server, "dave");
		expect(res.headers.get("set-cookie")).toContain("Secure");
		const anonymous = await server.get("/plans/1?tab=chat");
		expect(anonymous.status).toBe(302);
		expect(anonymous.headers.get("location")).toBe("/sign-in?next=%2Fplans%2F1%3Ftab%3Dchat");
		const { jar } = await signInLocally(server, "dave");
		expect((await server.get("/plans/1", jar)).status).toBe(200);
	});
});
