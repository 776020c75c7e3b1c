// The emulated REST endpoints over real HTTP: repository permissions per role, GitHub's 404 for
// what a caller cannot see, organizations, run-time changes, rate-limit headers and ETags.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "../../../../packages/agent-link/src/clock";
import { type GitHubEmulator, startGitHubEmulator } from "./github-emulator";
import { api, PAT, testFixture } from "./github-emulator-test-kit";

let clock: ManualClock;
let gh: GitHubEmulator;
const tokens: Record<string, string> = {};

beforeEach(async () => {
	clock = new ManualClock();
	gh = await startGitHubEmulator({ fixture: testFixture(), clock });
	for (const login of ["octocat", "maintainer", "hubot", "triager", "reader", "outsider"])
		tokens[login] = gh.addToken({ login });
});

afterEach(async () => {
	try {
		gh.verify();
	} finally {
		await gh.stop();
	}
});

async function json(res: Response): Promise<Record<string, unknown>> {
	return (await res.json()) as Record<string, unknown>;
}

describe("GET /repos/{owner}/{repo}", () => {
	test.each([
		["octocat", { admin: true, maintain: true, push: true, triage: true, pull: true }],
		["maintainer", { admin: false, maintain: true, push: true, triage: true, pull: true }],
		["hubot", { admin: false, maintain: false, push: true, triage: true, pull: true }],
		["triager", { admin: false, maintain: false, push: false, triage: true, pull: true }],
		["reader", { admin: false, maintain: false, push: false, triage: false, pull: true }],
	])("%s sees the private repository with its role's permissions", async (login, permissions) => {
		const res = await api(gh, "/repos/score-team/score", tokens[login]);
		expect(res.status).toBe(200);
		const body = await json(res);
		expect(body).toMatchObject({
			full_name: "score-team/score",
			private: true,
			visibility: "private",
			permissions,
		});
		expect(body.owner).toMatchObject({ login: "score-team", type: "Organization" });
	});

	test("a private repository is 404 Not Found for an account without access and for no token", async () => {
		for (const token of [tokens.outsider, undefined]) {
			const res = await api(gh, "/repos/score-team/score", token);
			expect(res.status).toBe(404);
			expect(await json(res)).toMatchObject({ message: "Not Found", status: "404" });
		}
		const missing = await api(gh, "/repos/score-team/missing", tokens.octocat);
		expect(missing.status).toBe(404);
		await missing.text();
	});

	test("a public repository: anyone reads it, only the authenticated get permissions", async () => {
		const outsider = await json(await api(gh, "/repos/octocat/hello-world", tokens.outsider));
		expect(outsider.permissions).toEqual({
			admin: false,
			maintain: false,
			push: false,
			triage: false,
			pull: true,
		});
		expect(outsider.owner).toMatchObject({ login: "octocat", type: "User" });
		const anonymous = await json(await api(gh, "/repos/octocat/hello-world"));
		expect(anonymous.full_name).toBe("octocat/hello-world");
		expect(anonymous).not.toHaveProperty("permissions");
	});

	test("names match case-insensitively and answer with the canonical spelling", async () => {
		const body = await json(await api(gh, "/repos/Score-Team/SCORE", tokens.octocat));
		expect(body.full_name).toBe("score-team/score");
	});

	test("permissions change at run time", async () => {
		gh.setPermission("score-team/score", "outsider", "write");
		const granted = await json(await api(gh, "/repos/score-team/score", tokens.outsider));
		expect(granted.permissions).toMatchObject({ push: true, admin: false });
		gh.removePermission("score-team/score", "hubot");
		const removed = await api(gh, "/repos/score-team/score", tokens.hubot);
		expect(removed.status).toBe(404);
		await removed.text();
		expect(() => gh.setPermission("score-team/nope", "hubot", "read")).toThrow("not in the fixture");
		expect(() => gh.setPermission("score-team/score", "ghost", "read")).toThrow('no user "ghost"');
	});
});

describe("users and organizations", () => {
	test("a user added at run time can be given a token and a role", async () => {
		const user = gh.addUser({ login: "newcomer", name: "New Comer", orgs: ["score-team"] });
		expect(user.id).toBeGreaterThan(583231);
		const token = gh.addToken({ login: "newcomer" });
		expect(await json(await api(gh, "/user", token))).toMatchObject({
			login: "newcomer",
			id: user.id,
			name: "New Comer",
		});
		gh.setPermission("score-team/score", "newcomer", "maintain");
		expect((await json(await api(gh, "/repos/score-team/score", token))).permissions).toMatchObject({
			maintain: true,
		});
		expect(() => gh.addUser({ login: "Octocat" })).toThrow("already taken");
	});

	test("GET /user/orgs lists the user's organizations", async () => {
		const orgs = (await (await api(gh, "/user/orgs", tokens.octocat)).json()) as Record<string, unknown>[];
		expect(orgs.map((o) => o.login)).toEqual(["score-team", "guild"]);
		expect(orgs[0]).toMatchObject({
			id: expect.any(Number),
			node_id: expect.any(String),
			url: `${gh.apiUrl}/orgs/score-team`,
		});
		expect(await (await api(gh, "/user/orgs", tokens.outsider)).json()).toEqual([]);
		expect((await api(gh, "/user/orgs")).status).toBe(401);
	});

	test("GET /orgs/{org}/members/{user}: 204 or 404 for a member asking, a redirect to public membership otherwise", async () => {
		const ask = (path: string, token?: string) =>
			fetch(`${gh.apiUrl}${path}`, {
				headers: token ? { authorization: `token ${token}` } : {},
				redirect: "manual",
			});
		expect((await ask("/orgs/score-team/members/hubot", tokens.octocat)).status).toBe(204);
		const notMember = await ask("/orgs/score-team/members/outsider", tokens.octocat);
		expect(notMember.status).toBe(404);
		expect((await json(notMember)).message).toBe(
			"User does not exist or is not a member of the organization",
		);
		const redirected = await ask("/orgs/score-team/members/hubot", tokens.outsider);
		expect(redirected.status).toBe(302);
		expect(redirected.headers.get("location")).toBe(`${gh.apiUrl}/orgs/score-team/public_members/hubot`);
		// Followed, as fetch does by default.
		expect((await api(gh, "/orgs/score-team/members/hubot", tokens.outsider)).status).toBe(204);
		expect((await ask("/orgs/nowhere/members/hubot", tokens.octocat)).status).toBe(404);
	});
});

describe("headers", () => {
	test("every answer carries rate-limit headers that count down per user", async () => {
		const first = await api(gh, "/user", PAT);
		expect(first.headers.get("x-ratelimit-limit")).toBe("5000");
		expect(first.headers.get("x-ratelimit-remaining")).toBe("4999");
		expect(first.headers.get("x-ratelimit-reset")).toBe(String(Math.ceil((clock.now() + 3_600_000) / 1000)));
		expect(first.headers.get("x-github-media-type")).toBe("github.v3; format=json");
		const second = await api(gh, "/user", PAT);
		expect(second.headers.get("x-ratelimit-remaining")).toBe("4998");
		const anonymous = await api(gh, "/repos/octocat/hello-world");
		expect(anonymous.headers.get("x-ratelimit-limit")).toBe("60");
		await Promise.all([first.text(), second.text(), anonymous.text()]);
	});

	test("a user past 5,000 calls an hour is refused with 403 until the window resets", async () => {
		for (let i = 0; i < 5000; i++) await (await api(gh, "/user", PAT)).arrayBuffer();
		const refused = await api(gh, "/user", PAT);
		expect(refused.status).toBe(403);
		expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
		expect((await json(refused)).message).toStartWith("API rate limit exceeded for user ID 583231.");
		await clock.advance(3_600_000);
		expect((await api(gh, "/user", PAT)).status).toBe(200);
	}, 60_000);

	test("an ETag revalidates with 304, which does not count against the limit", async () => {
		const first = await api(gh, "/user", PAT);
		const etag = first.headers.get("etag")!;
		expect(etag).toMatch(/^W\/"[0-9a-f]+"$/);
		await first.text();
		const again = await fetch(`${gh.apiUrl}/user`, {
			headers: { authorization: `Bearer ${PAT}`, "if-none-match": etag },
		});
		expect(again.status).toBe(304);
		expect(again.headers.get("x-ratelimit-remaining")).toBe("4999");
		const other = await fetch(`${gh.apiUrl}/user`, {
			headers: { authorization: `Bearer ${tokens.hubot}`, "if-none-match": etag },
		});
		expect(other.status).toBe(200);
		await other.text();
	});

	test("the ETag is per token: another token of the same user gets 200 and an ETag of its own", async () => {
		const second = gh.addToken({ login: "octocat" });
		const first = await api(gh, "/repos/score-team/score", PAT);
		const etag = first.headers.get("etag")!;
		await first.text();
		const conditional = (token: string, tag: string) =>
			fetch(`${gh.apiUrl}/repos/score-team/score`, {
				headers: { authorization: `Bearer ${token}`, "if-none-match": tag },
			});
		const other = await conditional(second, etag);
		expect(other.status).toBe(200);
		const otherEtag = other.headers.get("etag")!;
		expect(otherEtag).not.toBe(etag);
		await other.text();
		expect((await conditional(second, otherEtag)).status).toBe(304);
		expect((await conditional(PAT, etag)).status).toBe(304);
		// The same body for the same user, so only the token tells the two apart.
		expect(gh.rateLimit("octocat")).toEqual({
			limit: 5000,
			used: 2,
			remaining: 4998,
			reset: Math.ceil((clock.now() + 3_600_000) / 1000),
		});
		expect(gh.requests({ path: "/api/v3/repos/score-team/score", status: 304 })).toHaveLength(2);
	});

	test("a change answers 200 with a new ETag, counted; leaving an organization changes /user/orgs", async () => {
		const first = await api(gh, "/repos/score-team/score", tokens.hubot);
		const etag = first.headers.get("etag")!;
		await first.text();
		gh.setPermission("score-team/score", "hubot", "read");
		const changed = await fetch(`${gh.apiUrl}/repos/score-team/score`, {
			headers: { authorization: `Bearer ${tokens.hubot}`, "if-none-match": etag },
		});
		expect(changed.status).toBe(200);
		expect(changed.headers.get("etag")).not.toBe(etag);
		expect(((await json(changed)).permissions as { push: boolean }).push).toBe(false);
		expect(gh.rateLimit("hubot").used).toBe(2);

		const orgs = async () =>
			((await json(await api(gh, "/user/orgs", tokens.hubot))) as unknown as { login: string }[]).map(
				(o) => o.login,
			);
		expect(await orgs()).toEqual(["score-team"]);
		gh.leaveOrganization("hubot", "Score-Team");
		expect(await orgs()).toEqual([]);
		expect(() => gh.leaveOrganization("nobody", "score-team")).toThrow("There is no user");
	});
});
