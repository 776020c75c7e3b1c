import { afterEach, beforeEach, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import type { Env } from "../../config";
import { jsonResponse } from "../../http/responses";
import type { StartOverrides } from "../../server";
import { describeStores, type StoreFixture } from "../../store/testing";
import { type GitHubEmulator, startGitHubEmulator } from "../../testing/github-emulator";
import { testFixture } from "../../testing/github-emulator-test-kit";
import { CookieJar, signInWithGitHub } from "../../testing/sign-in";
import { type StoreServer, startStoreServer } from "../../testing/store-server";
import { requirePermission, requireUser } from "../guards";
import { STATE_COOKIE } from "./oauth-state";

const PUBLIC_URL = "http://chopin.test";

let clock: ManualClock;
let gh: GitHubEmulator;
let servers: StoreServer[];

beforeEach(async () => {
	clock = new ManualClock();
	servers = [];
	const fixture = testFixture();
	fixture.apps[0]!.redirectUri = PUBLIC_URL;
	gh = await startGitHubEmulator({ fixture, clock });
});

afterEach(async () => {
	for (const s of servers) await s.stop();
	gh.verify();
	await gh.stop();
});

/** A real server on the fixture's store, in GitHub mode against the emulator. */
async function serve(t: StoreFixture, env: Env = {}, register?: StartOverrides["register"]) {
	const server = await startStoreServer({
		store: t.store,
		clock,
		env: { PUBLIC_URL, ...gh.env(), ...env },
		register,
	});
	servers.push(server);
	return server;
}

/** /auth/github/start and GitHub's approval, stopping before the callback: its URL and the browser's cookies. */
async function startAndApprove(server: { get: (path: string) => Promise<Response> }, login: string) {
	const started = await server.get("/auth/github/start");
	const jar = new CookieJar().take(started);
	const approve = new URL(started.headers.get("location")!);
	approve.searchParams.set("login", login);
	const back = (await fetch(approve, { redirect: "manual" })).headers.get("location")!;
	return { jar, back };
}

/** Test routes that use the guards, as a domain's routes will. */
const guarded: StartOverrides["register"] = (router, ctx) => {
	router.get("/api/test/repos/:owner/:name", async ({ req, params }) => {
		const user = await requireUser(ctx, req);
		const need = new URL(req.url).searchParams.get("need") === "write" ? "write" : "read";
		const permission = await requirePermission(ctx, user, `${params.owner}/${params.name}`, need);
		return jsonResponse({ permission });
	});
	router.get("/plans/:id", async ({ req }) => {
		await requireUser(ctx, req);
		return new Response("<p>plan</p>", { headers: { "content-type": "text/html" } });
	});
};

describeStores("GitHub sign-in", (t) => {
	test("start → GitHub → callback → a session cookie that /api/me accepts", async () => {
		const server = await serve(t);
		const start = await server.get("/auth/github/start?next=%2Fplans%2F1%3Ftab%3Dchat");
		expect(start.status).toBe(302);
		const location = new URL(start.headers.get("location")!);
		expect(`${location.origin}${location.pathname}`).toBe(`${gh.url}/login/oauth/authorize`);
		expect(location.searchParams.get("client_id")).toBe(gh.env().GITHUB_CLIENT_ID);
		expect(location.searchParams.get("redirect_uri")).toBe(`${PUBLIC_URL}/auth/github/callback`);
		expect(location.searchParams.get("state")).toMatch(/^[A-Za-z0-9_-]{43}$/);
		const stateCookie = start.headers.get("set-cookie")!;
		expect(stateCookie).toContain(`${STATE_COOKIE}=`);
		expect(stateCookie).toContain("Path=/auth/github");
		expect(stateCookie).toContain("Max-Age=600");
		expect(stateCookie).toContain("HttpOnly");
		expect(stateCookie).toContain("SameSite=Lax");
		// The state itself is not readable from the cookie: it is sealed.
		expect(stateCookie).not.toContain(location.searchParams.get("state")!);

		const { jar, callback } = await signInWithGitHub(server, "octocat", { next: "/plans/1?tab=chat" });
		expect(callback.status).toBe(302);
		expect(callback.headers.get("location")).toBe("/plans/1?tab=chat");
		const cookies = callback.headers.getSetCookie();
		const session = cookies.find((c) => c.startsWith("chopin_session="))!;
		expect(session).toMatch(/^chopin_session=[A-Za-z0-9_-]{43};/);
		for (const flag of ["HttpOnly", "SameSite=Lax", "Path=/", `Max-Age=${30 * 24 * 3600}`]) {
			expect(session).toContain(flag);
		}
		expect(session).not.toContain("Secure");
		expect(cookies.some((c) => c.startsWith(`${STATE_COOKIE}=;`) && c.includes("Max-Age=0"))).toBe(true);
		expect(jar.get(STATE_COOKIE)).toBeUndefined();

		const me = await server.get("/api/me", jar);
		expect(me.status).toBe(200);
		expect(await me.json()).toEqual({
			login: "octocat",
			name: "The Octocat",
			avatarUrl: `${gh.url}/avatars/u/583231?v=4`,
			mode: "github",
		});
		expect(server.context.sessions.liveSignIn("octocat")).not.toBeNull();
		// GitHub was asked for the token and the user, nothing else (ADMIT is empty).
		expect(gh.requests().map((r) => r.path)).toEqual([
			"/login/oauth/authorize",
			"/login/oauth/access_token",
			"/api/v3/user",
		]);
		const log = server.logs.join("\n");
		expect(log).not.toContain(jar.get("chopin_session")!);
		expect(log).not.toMatch(/gh[ur]_[A-Za-z0-9]{20}/);
	});

	test("without a session /api/me is 401 sign-in-required, and a page redirects to the sign-in", async () => {
		const server = await serve(t, {}, guarded);
		const me = await server.get("/api/me");
		expect(me.status).toBe(401);
		expect(await me.json()).toMatchObject({ code: "sign-in-required" });
		const stale = new CookieJar();
		const withStale = await server.fetch(
			new Request(`${PUBLIC_URL}/api/me`, { headers: { cookie: `chopin_session=${"A".repeat(43)}` } }),
		);
		expect(withStale.status).toBe(401);
		stale.take(withStale);
		expect(withStale.headers.get("set-cookie")).toContain("Max-Age=0");
		const page = await server.get("/plans/7?x=1");
		expect(page.status).toBe(302);
		expect(page.headers.get("location")).toBe("/auth/github/start?next=%2Fplans%2F7%3Fx%3D1");
	});

	test("next must be a path on this origin", async () => {
		const server = await serve(t);
		for (const next of [
			"https://evil.example/x",
			"//evil.example/x",
			"/\\evil.example",
			"javascript:alert(1)",
			"plans",
		]) {
			const { callback } = await signInWithGitHub(server, "hubot", { next });
			expect(callback.headers.get("location")).toBe("/");
		}
	});

	test("a state that does not match, is missing, is replayed or is older than 10 minutes is refused", async () => {
		const server = await serve(t);
		// Another browser's state: the attacker's callback URL with the victim's cookie.
		const victim = new CookieJar().take(await server.get("/auth/github/start"));
		const attacker = await startAndApprove(server, "outsider");
		const forged = await server.fetch(
			new Request(attacker.back, { headers: { cookie: victim.header(), accept: "text/html" } }),
		);
		expect(forged.status).toBe(400);
		expect(forged.headers.get("content-type")).toContain("text/html");
		expect(await forged.text()).toContain("oauth-state-invalid");

		const json = await server.fetch(new Request(attacker.back, { headers: { accept: "application/json" } }));
		expect(json.status).toBe(400);
		expect(await json.json()).toMatchObject({ code: "oauth-state-invalid" });

		// Replay: the same callback with the same cookie a second time.
		const replay = await startAndApprove(server, "hubot");
		const once = await server.fetch(new Request(replay.back, { headers: { cookie: replay.jar.header() } }));
		expect(once.status).toBe(302);
		const twice = await server.fetch(new Request(replay.back, { headers: { cookie: replay.jar.header() } }));
		expect(twice.status).toBe(400);
		expect(await twice.json()).toMatchObject({
			code: "oauth-state-invalid",
			message: "This sign-in link was already used.",
		});

		// Too slow: the sealed cookie says when it expires.
		const slow = await startAndApprove(server, "hubot");
		await clock.advance(10 * 60_000);
		const late = await server.fetch(new Request(slow.back, { headers: { cookie: slow.jar.header() } }));
		expect(late.status).toBe(400);
		expect(await late.json()).toMatchObject({ code: "oauth-state-invalid" });
	});

	test("not admitted, by login list or by organization: 403 not-admitted and no session", async () => {
		const byLogin = await serve(t, { ADMIT: "octocat" });
		const refused = await signInWithGitHub(byLogin, "hubot");
		expect(refused.callback.status).toBe(403);
		expect(await refused.callback.text()).toContain("hubot is not admitted to this Chopin server.");
		expect(refused.jar.get("chopin_session")).toBeUndefined();
		expect((await signInWithGitHub(byLogin, "octocat")).callback.status).toBe(302);

		const byOrg = await serve(t, { ADMIT: "org:guild" });
		expect((await signInWithGitHub(byOrg, "octocat")).callback.status).toBe(302);
		const outsider = await signInWithGitHub(byOrg, "hubot");
		expect(outsider.callback.status).toBe(403);
		const asJson = await startAndApprove(byOrg, "outsider");
		const res = await byOrg.fetch(new Request(asJson.back, { headers: { cookie: asJson.jar.header() } }));
		expect(await res.json()).toMatchObject({ code: "not-admitted" });
		const rows = await t.store.many(t.store.sql`SELECT login FROM browser_sessions ORDER BY login`);
		expect(rows.map((r) => r.login)).toEqual(["octocat", "octocat"]);
	});

	test("a sign-in cancelled at GitHub, or a code GitHub refuses, is a clear refusal", async () => {
		const server = await serve(t);
		const started = await server.get("/auth/github/start");
		const jar = new CookieJar().take(started);
		const state = new URL(started.headers.get("location")!).searchParams.get("state")!;
		const cancelled = await server.get(`/auth/github/callback?error=access_denied&state=${state}`, jar);
		expect(cancelled.status).toBe(403);
		expect(await cancelled.json()).toMatchObject({ code: "sign-in-cancelled" });

		const again = await server.get("/auth/github/start");
		const jar2 = new CookieJar().take(again);
		const state2 = new URL(again.headers.get("location")!).searchParams.get("state")!;
		const bad = await server.get(`/auth/github/callback?code=nope&state=${state2}`, jar2);
		expect(bad.status).toBe(400);
		expect(await bad.json()).toMatchObject({ code: "oauth-code-invalid" });
	});

	test("GitHub failing or rate limiting during sign-in is 503 github-unavailable", async () => {
		const server = await serve(t, { ADMIT: "org:guild" });
		gh.inject({ kind: "status", status: 502, pathPrefix: "/login/oauth/access_token" });
		const down = await signInWithGitHub(server, "octocat");
		expect(down.callback.status).toBe(503);
		expect(await down.callback.text()).toContain("github-unavailable");

		gh.inject({ kind: "rate-limit", style: "secondary", seconds: 90, pathPrefix: "/api/v3/user" });
		const limited = await startAndApprove(server, "octocat");
		const res = await server.fetch(new Request(limited.back, { headers: { cookie: limited.jar.header() } }));
		expect(res.status).toBe(503);
		expect(res.headers.get("retry-after")).toBe("90");
		expect(await res.json()).toMatchObject({ code: "github-unavailable", retryAfter: 90 });

		gh.inject({ kind: "status", status: 500, pathPrefix: "/api/v3/user/orgs" });
		expect((await signInWithGitHub(server, "octocat")).callback.status).toBe(503);
		expect((await signInWithGitHub(server, "octocat")).callback.status).toBe(302);
	});

	test("a misconfigured client secret is a 500 naming the operator's fix, never the secret", async () => {
		const server = await serve(t, { GITHUB_CLIENT_SECRET: "not-the-secret" });
		const { callback } = await signInWithGitHub(server, "octocat");
		expect(callback.status).toBe(500);
		expect(await callback.text()).toContain("github-app-misconfigured");
		expect(server.logs.join("\n")).not.toContain("not-the-secret");
	});

	test("on an https PUBLIC_URL both cookies are Secure", async () => {
		const fixture = testFixture();
		fixture.apps[0]!.redirectUri = "https://chopin.example";
		await gh.stop();
		gh = await startGitHubEmulator({ fixture, clock });
		const server = await serve(t, { PUBLIC_URL: "https://chopin.example" });
		const start = await server.get("/auth/github/start");
		expect(start.headers.get("set-cookie")).toContain("Secure");
		const { callback } = await signInWithGitHub(server, "octocat");
		const session = callback.headers.getSetCookie().find((c) => c.startsWith("chopin_session="))!;
		expect(session).toContain("Secure");
		expect(new URL(start.headers.get("location")!).searchParams.get("redirect_uri")).toBe(
			"https://chopin.example/auth/github/callback",
		);
	});

	test("an intent hands the fresh grant to its handler instead of making a session", async () => {
		const server = await serve(t);
		const identity = server.context.identity;
		if (identity.mode !== "github") throw new Error("expected github mode");
		const grants: { login: string; next: string; token: string }[] = [];
		identity.grantHandlers.set("pair-machine", async ({ account, authorization, next }) => {
			grants.push({ login: account.login, next, token: await authorization.accessToken() });
			return new Response(null, { status: 303, headers: { location: next } });
		});
		const signedIn = await signInWithGitHub(server, "octocat");
		const { callback, jar } = await signInWithGitHub(server, "octocat", {
			intent: "pair-machine",
			next: "/machines/m1",
			jar: signedIn.jar,
		});
		expect(callback.status).toBe(303);
		expect(callback.headers.get("location")).toBe("/machines/m1");
		expect(grants).toHaveLength(1);
		// The handler's pair is its own: not the session's.
		const session = server.context.sessions.liveSignIn("octocat")!;
		expect(await session.authorization.accessToken()).not.toBe(grants[0]!.token);
		expect(jar.get("chopin_session")).toBe(signedIn.jar.get("chopin_session"));
		const unknown = await server.get("/auth/github/start?intent=nope");
		expect(unknown.status).toBe(400);
	});
});
