import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { type Env, loadConfig } from "../../config";
import { createLogger } from "../../log";
import { type GitHubEmulator, startGitHubEmulator } from "../../testing/github-emulator";
import { authorize, CALLBACK, PAT, testFixture } from "../../testing/github-emulator-test-kit";
import { IdentityError } from "../errors";
import type { GitHubIdentity } from "../identity";
import { SecretBox } from "../secret-box";
import type { GitHubAuthorization } from "./authorization";
import { BEARER_TTL_MS, createGitHubIdentity, PERMISSION_TTL_MS } from "./identity";

let clock: ManualClock;
let gh: GitHubEmulator;

function makeIdentity(env: Env = {}): GitHubIdentity {
	return createGitHubIdentity({
		config: loadConfig({ ...gh.env(), ...env }, { cwd: "/tmp" }),
		clock,
		log: createLogger({ level: "silent" }),
		fetch,
		box: new SecretBox(crypto.getRandomValues(new Uint8Array(32))),
		version: "test",
	});
}

async function signIn(identity: GitHubIdentity, login: string): Promise<GitHubAuthorization> {
	const { code } = await authorize(gh, login);
	return (await identity.signIn(code, CALLBACK)).authorization;
}

async function thrown(promise: Promise<unknown>): Promise<IdentityError> {
	try {
		await promise;
	} catch (error) {
		if (error instanceof IdentityError) return error;
		throw error;
	}
	throw new Error("expected an IdentityError");
}

const calls = (path: string) => gh.requests({ path }).length;

beforeEach(async () => {
	clock = new ManualClock();
	gh = await startGitHubEmulator({ fixture: testFixture(), clock });
});

afterEach(async () => {
	gh.verify();
	await gh.stop();
});

describe("permission", () => {
	test("maps GitHub's roles: admin and maintain → admin, write → write, triage and read → read, none → none", async () => {
		const identity = makeIdentity();
		const expected = {
			octocat: "admin",
			maintainer: "admin",
			hubot: "write",
			triager: "read",
			reader: "read",
			outsider: "none",
		} as const;
		for (const [login, permission] of Object.entries(expected)) {
			const auth = await signIn(identity, login);
			expect(await identity.permission(auth, "score-team/score")).toBe(permission);
			// Names compare without case, as GitHub's do.
			expect(await identity.permission(auth, "Score-Team/SCORE")).toBe(permission);
		}
		const octocat = await signIn(identity, "octocat");
		expect(await identity.permission(octocat, "score-team/missing")).toBe("none");
		expect(await identity.permission(octocat, "not a name")).toBe("none");
	});

	test("is cached 30 s per account and repository: lost push access shows once the cache expires", async () => {
		const identity = makeIdentity();
		const hubot = await signIn(identity, "hubot");
		expect(await identity.permission(hubot, "score-team/score")).toBe("write");
		gh.setPermission("score-team/score", "hubot", "read");
		await clock.advance(PERMISSION_TTL_MS - 1);
		expect(await identity.permission(hubot, "score-team/score")).toBe("write");
		expect(calls("/api/v3/repos/score-team/score")).toBe(1);
		await clock.advance(1);
		expect(await identity.permission(hubot, "score-team/score")).toBe("read");
		gh.removePermission("score-team/score", "hubot");
		identity.forget("HUBOT");
		expect(await identity.permission(hubot, "score-team/score")).toBe("none");
		expect(calls("/api/v3/repos/score-team/score")).toBe(3);
	});

	test("fresh asks GitHub every time, conditionally (304s), and what it learns is what the next kept answer says", async () => {
		const identity = makeIdentity({ ADMIT: "org:score-team" });
		const hubot = await signIn(identity, "hubot");
		const fresh = { fresh: true } as const;
		for (let i = 0; i < 3; i++) {
			expect(await identity.permission(hubot, "score-team/score", fresh)).toBe("write");
			expect(await identity.admitted(hubot, fresh)).toBe(true);
		}
		expect(gh.requests({ path: "/api/v3/repos/score-team/score" }).map((r) => r.status)).toEqual([
			200, 304, 304,
		]);
		expect(gh.requests({ path: "/api/v3/user/orgs" }).map((r) => r.status)).toEqual([200, 304, 304]);
		expect(gh.rateLimit("hubot").used).toBe(3); // /user at sign-in, then the two 200s
		gh.setPermission("score-team/score", "hubot", "read");
		gh.leaveOrganization("hubot", "score-team");
		expect(await identity.permission(hubot, "score-team/score", fresh)).toBe("read");
		expect(await identity.admitted(hubot, fresh)).toBe(false);
		// Pages and guards, which take the kept answer, see the change at once too.
		expect(await identity.permission(hubot, "score-team/score")).toBe("read");
		expect(await identity.admitted(hubot)).toBe(false);
		expect(calls("/api/v3/repos/score-team/score")).toBe(4);
	});

	test("a GitHub failure is unavailable and not cached; a revoked authorization is authorization-expired", async () => {
		const identity = makeIdentity();
		const hubot = await signIn(identity, "hubot");
		gh.inject({ kind: "status", status: 500, pathPrefix: "/api/v3/repos" });
		expect((await thrown(identity.permission(hubot, "score-team/score"))).code).toBe("unavailable");
		gh.inject({ kind: "rate-limit", style: "primary", seconds: 120 });
		const limited = await thrown(identity.permission(hubot, "score-team/score"));
		expect([limited.code, limited.retryAfterMs]).toEqual(["unavailable", 120_000]);
		expect(await identity.permission(hubot, "score-team/score")).toBe("write");

		// A revoked access token whose refresh token still works: renewed once, and the call succeeds.
		const token = await hubot.accessToken();
		gh.revokeToken(token);
		expect(await identity.permission(hubot, "octocat/hello-world")).toBe("read");
		expect(await hubot.accessToken()).not.toBe(token);
		// The app's authorization revoked: nothing renews, the authorization ends.
		gh.revokeAuthorization("hubot");
		expect((await thrown(identity.permission(hubot, "score-team/other"))).code).toBe("authorization-expired");
		expect(hubot.ended).toBe(true);
	});
});

describe("admission", () => {
	test("an empty ADMIT admits everyone without asking GitHub", async () => {
		const identity = makeIdentity();
		expect(await identity.admitted(await signIn(identity, "outsider"))).toBe(true);
		expect(calls("/api/v3/user/orgs")).toBe(0);
	});

	test("listed logins are admitted without a call; otherwise membership of a listed organization", async () => {
		const identity = makeIdentity({ ADMIT: "Outsider, org:Guild" });
		expect(await identity.admitted(await signIn(identity, "outsider"))).toBe(true);
		expect(calls("/api/v3/user/orgs")).toBe(0);
		expect(await identity.admitted(await signIn(identity, "octocat"))).toBe(true);
		expect(await identity.admitted(await signIn(identity, "hubot"))).toBe(false);
		expect(calls("/api/v3/user/orgs")).toBe(2);
		const loginsOnly = makeIdentity({ ADMIT: "octocat" });
		expect(await loginsOnly.admitted(await signIn(loginsOnly, "hubot"))).toBe(false);
		expect(calls("/api/v3/user/orgs")).toBe(2);
	});

	test("a GitHub failure while checking organizations is unavailable", async () => {
		const identity = makeIdentity({ ADMIT: "org:guild" });
		const hubot = await signIn(identity, "hubot");
		gh.inject({ kind: "status", status: 503, pathPrefix: "/api/v3/user/orgs" });
		expect((await thrown(identity.admitted(hubot))).code).toBe("unavailable");
	});
});

describe("verifyBearer", () => {
	test("checks GET /user once per 60 s, keyed by the token's digest, and acts with the bearer itself", async () => {
		const identity = makeIdentity();
		const first = await identity.verifyBearer(PAT);
		expect(first.account).toEqual({
			login: "octocat",
			kind: "github",
			name: "The Octocat",
			avatarUrl: `${gh.url}/avatars/u/583231?v=4`,
			githubId: 583231,
		});
		expect(await first.authorization.accessToken()).toBe(PAT);
		await identity.verifyBearer(PAT);
		await clock.advance(BEARER_TTL_MS - 1);
		await identity.verifyBearer(PAT);
		expect(calls("/api/v3/user")).toBe(1);
		await clock.advance(1);
		await identity.verifyBearer(PAT);
		expect(calls("/api/v3/user")).toBe(2);
		// The bearer's own access is what counts for its permission (a PAT may see less than its user).
		expect(await identity.permission(first.authorization, "score-team/score")).toBe("admin");
	});

	test("a rejected or malformed bearer is unauthorized; GitHub failing or rate limiting is unavailable", async () => {
		const identity = makeIdentity();
		expect((await thrown(identity.verifyBearer("ghp_unknownToken000000000000000000000"))).code).toBe(
			"unauthorized",
		);
		expect((await thrown(identity.verifyBearer("two words"))).code).toBe("unauthorized");
		expect((await thrown(identity.verifyBearer(""))).code).toBe("unauthorized");
		gh.inject({ kind: "status", status: 500, pathPrefix: "/api/v3/user" });
		expect((await thrown(identity.verifyBearer(PAT))).code).toBe("unavailable");
		gh.inject({ kind: "rate-limit", style: "secondary", seconds: 45 });
		const limited = await thrown(identity.verifyBearer(PAT));
		expect([limited.code, limited.retryAfterMs]).toEqual(["unavailable", 45_000]);
		// Failures are never cached: the next call asks again and succeeds.
		expect((await identity.verifyBearer(PAT)).account.login).toBe("octocat");
	});

	test("a revoked bearer is refused once its cached answer expires", async () => {
		const identity = makeIdentity();
		await identity.verifyBearer(PAT);
		gh.revokeToken(PAT);
		expect((await identity.verifyBearer(PAT)).account.login).toBe("octocat");
		await clock.advance(BEARER_TTL_MS);
		expect((await thrown(identity.verifyBearer(PAT))).code).toBe("unauthorized");
	});
});
