import { afterEach, beforeEach, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import type { Env } from "../../config";
import { jsonResponse } from "../../http/responses";
import type { StartOverrides } from "../../server";
import { describeStores, type StoreFixture } from "../../store/testing";
import { type GitHubEmulator, startGitHubEmulator } from "../../testing/github-emulator";
import { PAT, testFixture } from "../../testing/github-emulator-test-kit";
import { signInWithGitHub } from "../../testing/sign-in";
import { type StoreServer, startStoreServer } from "../../testing/store-server";
import { requirePermission, requireUser } from "../guards";
import { PERMISSION_TTL_MS } from "./identity";

const PUBLIC_URL = "http://chopin.test";
const HOUR = 3_600_000;

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

/** A domain route using the guards: the caller's permission on a repository, at least ?need. */
const guarded: StartOverrides["register"] = (router, ctx) => {
	router.get("/api/test/repos/:owner/:name", async ({ req, params }) => {
		const user = await requireUser(ctx, req);
		const need = new URL(req.url).searchParams.get("need") === "write" ? "write" : "read";
		const permission = await requirePermission(ctx, user, `${params.owner}/${params.name}`, need);
		return jsonResponse({ permission });
	});
	router.post("/api/test/echo", async ({ req }) =>
		jsonResponse({ login: (await requireUser(ctx, req)).login }),
	);
};

async function serve(t: StoreFixture, env: Env = {}) {
	const server = await startStoreServer({
		store: t.store,
		clock,
		env: { PUBLIC_URL, ...gh.env(), ...env },
		register: guarded,
	});
	servers.push(server);
	return server;
}

const tokenCalls = () => gh.requests({ path: "/login/oauth/access_token" }).length;

describeStores("a GitHub session's life", (t) => {
	test("the user token is renewed on use within five minutes of expiry, on both clocks, and stored sealed", async () => {
		const server = await serve(t);
		const { jar } = await signInWithGitHub(server, "hubot");
		const row = async () =>
			t.store.one(
				t.store.sql`SELECT github_expires_at, github_access_enc FROM browser_sessions WHERE login = 'hubot'`,
			);
		const before = await row();
		expect(before?.github_expires_at).toBe(clock.now() + 8 * HOUR);

		await clock.advance(8 * HOUR - 5 * 60_000 - 1);
		expect((await server.get("/api/me", jar)).status).toBe(200);
		expect(tokenCalls()).toBe(1);
		await clock.advance(1);
		expect((await server.get("/api/me", jar)).status).toBe(200);
		expect(tokenCalls()).toBe(2);
		const after = await row();
		expect(after?.github_expires_at).toBe(clock.now() + 8 * HOUR);
		expect(
			Buffer.from(after!.github_access_enc as Uint8Array).equals(
				Buffer.from(before!.github_access_enc as Uint8Array),
			),
		).toBe(false);
		// The renewed token works at GitHub: the permission check uses it.
		expect(await (await server.get("/api/test/repos/score-team/score", jar)).json()).toEqual({
			permission: "write",
		});
		// A day later, still the same session, renewed again on use.
		await clock.advance(24 * HOUR);
		expect((await server.get("/api/test/repos/score-team/score", jar)).status).toBe(200);
		expect(tokenCalls()).toBe(3);
	});

	test("a revoked authorization ends the session: sign-in-required, liveness gone, onSessionExpired(revoked)", async () => {
		const server = await serve(t);
		const { jar } = await signInWithGitHub(server, "hubot");
		const ended: [string, string][] = [];
		server.context.sessions.onSessionExpired((login, _id, reason) => ended.push([login, reason]));
		gh.revokeAuthorization("hubot");
		const refused = await server.get("/api/test/repos/score-team/score", jar);
		expect(refused.status).toBe(401);
		expect(await refused.json()).toMatchObject({ code: "sign-in-required" });
		expect(ended).toEqual([["hubot", "revoked"]]);
		expect(server.context.sessions.liveSignIn("hubot")).toBeNull();
		const me = await server.get("/api/me", jar);
		expect(me.status).toBe(401);
		expect(me.headers.get("set-cookie")).toContain("Max-Age=0");
	});

	test("a revoked authorization found at renewal time also ends the session", async () => {
		const server = await serve(t);
		const { jar } = await signInWithGitHub(server, "hubot");
		gh.revokeAuthorization("hubot");
		await clock.advance(8 * HOUR - 60_000);
		expect((await server.get("/api/me", jar)).status).toBe(401);
		await server.context.sessions.settled();
		expect(await t.store.many(t.store.sql`SELECT login FROM browser_sessions`)).toEqual([]);
	});

	test("permissions: push needed, read only is 403, none is 404, lost access shows after the 30 s cache", async () => {
		const server = await serve(t);
		const hubot = (await signInWithGitHub(server, "hubot")).jar;
		const reader = (await signInWithGitHub(server, "reader")).jar;
		const outsider = (await signInWithGitHub(server, "outsider")).jar;
		const path = "/api/test/repos/score-team/score?need=write";
		expect(await (await server.get(path, hubot)).json()).toEqual({ permission: "write" });
		const readOnly = await server.get(path, reader);
		expect(readOnly.status).toBe(403);
		expect(await readOnly.json()).toMatchObject({ code: "repository-forbidden" });
		expect(await (await server.get("/api/test/repos/score-team/score", reader)).json()).toEqual({
			permission: "read",
		});
		const none = await server.get(path, outsider);
		expect(none.status).toBe(404);
		expect(await none.json()).toMatchObject({ code: "not-found" });

		gh.setPermission("score-team/score", "hubot", "read");
		expect((await server.get(path, hubot)).status).toBe(200);
		await clock.advance(PERMISSION_TTL_MS);
		expect((await server.get(path, hubot)).status).toBe(403);
	});

	test("GitHub failing during a permission check is 503 github-unavailable; the session stays", async () => {
		const server = await serve(t);
		const { jar } = await signInWithGitHub(server, "hubot");
		gh.inject({ kind: "status", status: 500, pathPrefix: "/api/v3/repos" });
		const down = await server.get("/api/test/repos/score-team/score", jar);
		expect(down.status).toBe(503);
		expect(await down.json()).toMatchObject({ code: "github-unavailable" });
		gh.inject({ kind: "rate-limit", style: "primary", seconds: 30, pathPrefix: "/api/v3/repos" });
		const limited = await server.get("/api/test/repos/score-team/score", jar);
		expect([limited.status, limited.headers.get("retry-after")]).toEqual([503, "30"]);
		expect((await server.get("/api/test/repos/score-team/score", jar)).status).toBe(200);
	});

	test("sign-out: 204, cookie cleared, liveness gone, onSignOut fired; the cookie no longer works", async () => {
		const server = await serve(t);
		const { jar } = await signInWithGitHub(server, "octocat");
		const events: [string, string][] = [];
		server.context.sessions.onSignOut((login, id) => events.push([login, id]));
		const live = server.context.sessions.liveSignIn("octocat")!;
		const res = await server.post("/auth/sign-out", undefined, jar, { "content-type": "" });
		expect(res.status).toBe(204);
		expect(res.headers.get("set-cookie")).toMatch(/^chopin_session=;.*Max-Age=0/);
		expect(events).toEqual([["octocat", live.sessionId]]);
		expect(server.context.sessions.liveSignIn("octocat")).toBeNull();
		expect((await server.get("/api/me", jar)).status).toBe(401);
		// Signing out again (or never signed in) is the same answer.
		expect((await server.post("/auth/sign-out", undefined, jar)).status).toBe(204);
	});

	test("CSRF: a cookie-authenticated write needs our Origin, or a JSON body when no Origin is sent", async () => {
		const server = await serve(t);
		const { jar } = await signInWithGitHub(server, "octocat");
		const post = (headers: Record<string, string>, body?: string) =>
			server.fetch(
				new Request(`${PUBLIC_URL}/api/test/echo`, {
					method: "POST",
					headers: { cookie: jar.header(), ...headers },
					body,
				}),
			);
		expect((await post({ origin: PUBLIC_URL })).status).toBe(200);
		expect((await post({ "content-type": "application/json" }, "{}")).status).toBe(200);
		const form = await post({ "content-type": "application/x-www-form-urlencoded" }, "a=1");
		expect(form.status).toBe(403);
		expect(await form.json()).toMatchObject({ code: "origin-forbidden" });
		expect(
			(await post({ origin: "https://evil.example", "content-type": "application/json" }, "{}")).status,
		).toBe(403);
		const signOut = await server.fetch(
			new Request(`${PUBLIC_URL}/auth/sign-out`, { method: "POST", headers: { cookie: jar.header() } }),
		);
		expect(signOut.status).toBe(403);
		expect(server.context.sessions.liveSignIn("octocat")).not.toBeNull();
	});

	test("what the agent endpoint does: a bearer, then the same account's live browser sign-in", async () => {
		const server = await serve(t);
		const { identity, sessions } = server.context;
		const { account, authorization } = await identity.verifyBearer(PAT);
		expect(account.login).toBe("octocat");
		expect(await identity.permission(authorization, "score-team/score")).toBe("admin");
		expect(sessions.liveSignIn(account.login)).toBeNull();
		await signInWithGitHub(server, "octocat");
		const live = sessions.liveSignIn(account.login)!;
		expect(live.authorization.login).toBe("octocat");
		expect(await identity.admitted(live.authorization)).toBe(true);
		expect(await identity.permission(live.authorization, "score-team/score")).toBe("admin");
		// A restart forgets liveness: the next process knows nobody until a cookie is presented.
		const again = await serve(t);
		expect(again.context.sessions.liveSignIn("octocat")).toBeNull();
	});
});
