import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { createLogger } from "../../log";
import { Secret } from "../../secret";
import { type GitHubEmulator, startGitHubEmulator } from "../../testing/github-emulator";
import {
	authorize,
	CALLBACK,
	CLIENT_ID,
	CLIENT_SECRET,
	PAT,
	testFixture,
} from "../../testing/github-emulator-test-kit";
import { sha256Hex } from "../tokens";
import { GitHubClient, GitHubError, joinUrl } from "./client";
import { ETags } from "./etags";

let clock: ManualClock;
let gh: GitHubEmulator;
let lines: string[];

function client(overrides: { clientSecret?: string; apiUrl?: string } = {}) {
	return new GitHubClient({
		webUrl: gh.url,
		apiUrl: overrides.apiUrl ?? gh.apiUrl,
		clientId: CLIENT_ID,
		clientSecret: new Secret(overrides.clientSecret ?? CLIENT_SECRET),
		fetch,
		clock,
		log: createLogger({ level: "debug", write: (l) => lines.push(l) }),
		userAgent: "Chopin/test",
	});
}

async function failure(promise: Promise<unknown>): Promise<GitHubError> {
	try {
		await promise;
	} catch (error) {
		if (error instanceof GitHubError) return error;
		throw error;
	}
	throw new Error("expected a GitHubError");
}

beforeEach(async () => {
	clock = new ManualClock();
	lines = [];
	gh = await startGitHubEmulator({ fixture: testFixture(), clock });
});

afterEach(async () => {
	gh.verify();
	await gh.stop();
});

test("joinUrl keeps the base's path, with or without slashes", () => {
	expect(joinUrl("https://ghe.example/api/v3", "/user")).toBe("https://ghe.example/api/v3/user");
	expect(joinUrl("https://ghe.example/api/v3/", "user")).toBe("https://ghe.example/api/v3/user");
	expect(joinUrl("https://api.github.com", "/repos/a/b")).toBe("https://api.github.com/repos/a/b");
});

describe("REST calls", () => {
	test("reach the API under its base path with a User-Agent, and parse GitHub's answers", async () => {
		const c = client();
		expect(await c.user(PAT)).toMatchObject({ login: "octocat", id: 583231, name: "The Octocat" });
		expect((await c.organizations(PAT)).sort()).toEqual(["guild", "score-team"]);
		const repo = await c.repository(PAT, "score-team/score");
		expect(repo.permissions).toMatchObject({ admin: true, push: true, pull: true });
		// Every call went to /api/v3/...: the emulator answers a root /user as an unexpected call.
		expect(gh.requests().map((r) => r.path)).toEqual([
			"/api/v3/user",
			"/api/v3/user/orgs",
			"/api/v3/repos/score-team/score",
		]);
		expect(gh.unexpected()).toEqual([]);
	});

	test("401 is unauthorized, 404 not-found; a name that is no repository is not-found without a call", async () => {
		const c = client();
		expect((await failure(c.user("ghu_notAToken000000000000000000000000"))).kind).toBe("unauthorized");
		const hidden = await failure(c.repository(PAT, "score-team/nope"));
		expect([hidden.kind, hidden.details.status]).toEqual(["not-found", 404]);
		expect((await failure(c.repository(PAT, "../etc"))).kind).toBe("not-found");
		expect(gh.requests()).toHaveLength(2);
	});

	test("5xx, either rate limit, a hung request and a refused connection are unavailable, with retry-after when known", async () => {
		const c = client();
		gh.inject({ kind: "status", status: 500, pathPrefix: "/api/v3/user" });
		expect(await failure(c.user(PAT))).toMatchObject({ kind: "unavailable", details: { status: 500 } });
		gh.inject({ kind: "status", status: 502, pathPrefix: "/api/v3/user" });
		expect((await failure(c.user(PAT))).kind).toBe("unavailable");
		gh.inject({ kind: "rate-limit", style: "primary", seconds: 60 });
		expect(await failure(c.user(PAT))).toMatchObject({
			kind: "unavailable",
			details: { status: 403, retryAfterMs: 60_000 },
		});
		gh.inject({ kind: "rate-limit", style: "secondary", seconds: 30 });
		expect(await failure(c.user(PAT))).toMatchObject({
			kind: "unavailable",
			details: { status: 429, retryAfterMs: 30_000 },
		});
		gh.inject({ kind: "rate-limit", style: "secondary", status: 403, seconds: 7 });
		expect((await failure(c.repository(PAT, "score-team/score"))).details.retryAfterMs).toBe(7_000);

		gh.inject({ kind: "hang", pathPrefix: "/api/v3/user" });
		const hung = failure(c.user(PAT));
		while (gh.held === 0) await Bun.sleep(1);
		await clock.advance(10_000);
		expect(await hung).toMatchObject({
			kind: "unavailable",
			message: "GitHub did not answer within 10000 ms.",
		});

		const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
		const apiUrl = `http://127.0.0.1:${closed.port}/api/v3`;
		await closed.stop(true);
		expect(await failure(client({ apiUrl }).user(PAT))).toMatchObject({
			kind: "unavailable",
			message: "GitHub could not be reached.",
		});
	});
});

describe("conditional requests", () => {
	const REPO = "/api/v3/repos/score-team/score";

	test("a repeat GET sends If-None-Match; GitHub's 304 gives the same answer and spends no rate limit", async () => {
		const c = client();
		const first = await c.repository(PAT, "score-team/score");
		expect(await c.repository(PAT, "score-team/score")).toEqual(first);
		expect(await c.repository(PAT, "score-team/score")).toEqual(first);
		expect(gh.requests({ path: REPO }).map((r) => r.status)).toEqual([200, 304, 304]);
		expect(gh.rateLimit("octocat").used).toBe(1);
		// A change is a 200 with the new answer at once.
		gh.setPermission("score-team/score", "octocat", "read");
		expect((await c.repository(PAT, "score-team/score")).permissions).toMatchObject({
			admin: false,
			push: false,
			pull: true,
		});
		expect(gh.requests({ path: REPO }).at(-1)!.status).toBe(200);
		expect(lines.some((l) => l.includes('"status":304'))).toBe(true);
	});

	test("a failure never falls back on the kept answer; the kept ETag is still sent afterwards", async () => {
		const c = client();
		await c.organizations(PAT);
		gh.inject({ kind: "status", status: 502, pathPrefix: "/api/v3/user/orgs" });
		expect((await failure(c.organizations(PAT))).kind).toBe("unavailable");
		gh.inject({ kind: "rate-limit", style: "primary", pathPrefix: "/api/v3/user/orgs" });
		expect((await failure(c.organizations(PAT))).kind).toBe("unavailable");
		expect((await c.organizations(PAT)).sort()).toEqual(["guild", "score-team"]);
		expect(gh.requests({ path: "/api/v3/user/orgs" }).map((r) => r.status)).toEqual([200, 502, 403, 304]);
		// A repository the token can no longer see is not-found, not the kept answer.
		await c.repository(PAT, "score-team/score");
		gh.removePermission("score-team/score", "octocat");
		expect((await failure(c.repository(PAT, "score-team/score"))).kind).toBe("not-found");
	});

	test("ETags are per token, kept under the token's digest: another token of the same user asks afresh", async () => {
		const c = client();
		const other = gh.addToken({ login: "octocat" });
		await c.repository(PAT, "score-team/score");
		await c.repository(other, "score-team/score");
		await c.repository(other, "score-team/score");
		expect(gh.requests({ path: REPO }).map((r) => r.status)).toEqual([200, 200, 304]);
		const key = ETags.key(PAT, "/repos/score-team/score");
		expect(key).toStartWith(sha256Hex(PAT));
		expect(key).not.toContain(PAT);
	});
});

describe("the token endpoint", () => {
	test("trades a code for an expiring pair and refreshes it; a used code or refresh token is unauthorized", async () => {
		const c = client();
		const { code } = await authorize(gh, "hubot");
		const grant = await c.exchangeCode(code, CALLBACK);
		expect(grant.accessToken).toStartWith("ghu_");
		expect(grant.refreshToken).toStartWith("ghr_");
		expect(grant.expiresAt).toBe(clock.now() + 8 * 3_600_000);
		expect(grant.refreshExpiresAt).toBe(clock.now() + 15_897_600_000);
		expect((await c.user(grant.accessToken)).login).toBe("hubot");

		const again = await failure(c.exchangeCode(code, CALLBACK));
		expect([again.kind, again.details.oauthError]).toEqual(["unauthorized", "bad_verification_code"]);

		await clock.advance(60_000);
		const renewed = await c.refresh(grant.refreshToken!);
		expect(renewed.expiresAt).toBe(clock.now() + 8 * 3_600_000);
		expect(renewed.accessToken).not.toBe(grant.accessToken);
		// GitHub rotates the pair: the old refresh token and access token are dead.
		const stale = await failure(c.refresh(grant.refreshToken!));
		expect([stale.kind, stale.details.oauthError]).toEqual(["unauthorized", "bad_refresh_token"]);
		expect((await failure(c.user(grant.accessToken))).kind).toBe("unauthorized");
	});

	test("a wrong client secret is unexpected (the operator must fix it); a 5xx is unavailable", async () => {
		const { code } = await authorize(gh, "hubot");
		const wrong = await failure(client({ clientSecret: "nope" }).exchangeCode(code, CALLBACK));
		expect([wrong.kind, wrong.details.oauthError]).toEqual(["unexpected", "incorrect_client_credentials"]);
		gh.inject({ kind: "status", status: 503, pathPrefix: "/login/oauth/access_token" });
		expect((await failure(client().exchangeCode(code, CALLBACK))).kind).toBe("unavailable");
		// A faulted request never reached the endpoint: the code still works.
		expect((await client().exchangeCode(code, CALLBACK)).accessToken).toStartWith("ghu_");
	});

	test("no token, code or secret ever reaches the log", async () => {
		const c = client();
		const { code } = await authorize(gh, "octocat");
		const grant = await c.exchangeCode(code, CALLBACK);
		await c.user(grant.accessToken);
		await c.refresh(grant.refreshToken!);
		gh.inject({ kind: "status", status: 500 });
		await failure(c.user(PAT));
		const log = lines.join("\n");
		expect(lines.length).toBeGreaterThan(3);
		for (const secret of [code, grant.accessToken, grant.refreshToken!, PAT, CLIENT_SECRET]) {
			expect(log).not.toContain(secret);
		}
		expect(log).toContain('"path":"/login/oauth/access_token"');
	});
});
