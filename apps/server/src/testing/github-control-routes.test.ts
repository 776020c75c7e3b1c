// The HTTP control API under /_emulator/, as the standalone emulator's users drive it.
import { afterEach, beforeEach, expect, test } from "bun:test";
import { ManualClock } from "../../../../packages/agent-link/src/clock";
import { type GitHubEmulator, startGitHubEmulator } from "./github-emulator";
import { api, PAT, testFixture } from "./github-emulator-test-kit";
import { requestRecordSchema } from "./github-request-log";

let gh: GitHubEmulator;

beforeEach(async () => {
	gh = await startGitHubEmulator({ fixture: testFixture(), clock: new ManualClock() });
});

afterEach(async () => {
	try {
		gh.verify();
	} finally {
		await gh.stop();
	}
});

async function control(
	method: string,
	path: string,
	body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> | null }> {
	const res = await fetch(`${gh.url}/_emulator${path}`, {
		method,
		...(body === undefined
			? {}
			: { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
	});
	const text = await res.text();
	return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : null };
}

async function apiStatus(path: string, token?: string): Promise<number> {
	const res = await api(gh, path, token);
	await res.arrayBuffer();
	return res.status;
}

test("GET /_emulator/ says where the web and API roots are", async () => {
	expect((await control("GET", "/")).json).toEqual({ url: gh.url, apiUrl: gh.apiUrl });
});

test("users, tokens and permissions change over HTTP", async () => {
	expect(await control("POST", "/users", { login: "newbie", orgs: ["score-team"] })).toEqual({
		status: 201,
		json: { login: "newbie", id: expect.any(Number) },
	});
	const { json } = await control("POST", "/tokens", { login: "newbie" });
	const token = json!.token as string;
	expect(token).toStartWith("ghu_");
	expect(await apiStatus("/repos/score-team/score", token)).toBe(404);
	expect((await control("PUT", "/repos/score-team/score/permissions/newbie", { role: "write" })).status).toBe(
		204,
	);
	expect(await apiStatus("/repos/score-team/score", token)).toBe(200);
	expect((await control("DELETE", "/repos/score-team/score/permissions/newbie")).status).toBe(204);
	expect(await apiStatus("/repos/score-team/score", token)).toBe(404);

	expect((await control("POST", "/tokens/expire", { token })).status).toBe(204);
	expect(await apiStatus("/user", token)).toBe(401);
	expect((await control("POST", "/tokens/revoke", { token: PAT })).status).toBe(204);
	expect(await apiStatus("/user", PAT)).toBe(401);
	const another = (await control("POST", "/tokens", { login: "hubot", token: "ghp_chosenByTheTest" })).json!
		.token as string;
	expect(another).toBe("ghp_chosenByTheTest");
	expect((await control("POST", "/authorizations/revoke", { login: "hubot" })).status).toBe(204);
	expect(await apiStatus("/user", another)).toBe(401);
});

test("organization membership and a user's rate limit over HTTP", async () => {
	expect(await apiStatus("/user/orgs", PAT)).toBe(200);
	expect(await control("GET", "/rate-limit/octocat")).toEqual({
		status: 200,
		json: { limit: 5000, used: 1, remaining: 4999, reset: expect.any(Number) },
	});
	expect((await control("DELETE", "/orgs/score-team/members/octocat")).status).toBe(204);
	const orgs = (await (await api(gh, "/user/orgs", PAT)).json()) as { login: string }[];
	expect(orgs.map((o) => o.login)).toEqual(["guild"]);
	expect((await control("GET", "/rate-limit/nobody")).status).toBe(404);
});

test("faults are injected and cleared over HTTP", async () => {
	expect((await control("POST", "/faults", { kind: "status", status: 503, times: 5 })).status).toBe(201);
	expect(await apiStatus("/user", PAT)).toBe(503);
	expect((await control("DELETE", "/faults")).status).toBe(204);
	expect(await apiStatus("/user", PAT)).toBe(200);
	expect((await control("POST", "/held/release")).status).toBe(204);
});

test("the request log and verify are readable over HTTP; control calls are not logged", async () => {
	await apiStatus("/user", PAT);
	await fetch(`${gh.url}/api/v3/user/installations`).then((r) => r.text());
	const { json } = await control("GET", "/requests");
	const requests = requestRecordSchema.array().parse(json!.requests);
	expect(requests.map((r) => `${r.method} ${r.path} ${r.unexpected}`)).toEqual([
		"GET /api/v3/user false",
		"GET /api/v3/user/installations true",
	]);
	expect(((await control("GET", "/requests?unexpected=1")).json!.requests as unknown[]).length).toBe(1);
	const verify = await control("POST", "/verify");
	expect(verify.status).toBe(409);
	expect(verify.json).toMatchObject({
		code: "unexpected-calls",
		details: ["GET /api/v3/user/installations"],
	});
	expect((await control("DELETE", "/requests")).status).toBe(204);
	expect((await control("POST", "/verify")).status).toBe(204);
});

test("bad control requests answer { code, message, hint } with a fitting status", async () => {
	expect(await control("POST", "/users", { login: "bad login" })).toMatchObject({
		status: 400,
		json: {
			code: "invalid-control-request",
			message: expect.stringContaining("login: must be a GitHub login"),
		},
	});
	expect(await control("POST", "/users", { login: "octocat" })).toMatchObject({
		status: 409,
		json: { code: "duplicate-user" },
	});
	expect(await control("POST", "/tokens", { login: "ghost" })).toMatchObject({
		status: 404,
		json: { code: "unknown-user" },
	});
	expect(await control("POST", "/tokens/revoke", { token: "nope" })).toMatchObject({
		status: 404,
		json: { code: "unknown-token" },
	});
	expect(await control("PUT", "/repos/a/b/permissions/octocat", { role: "admin" })).toMatchObject({
		status: 404,
		json: { code: "unknown-repository" },
	});
	expect(
		await control("PUT", "/repos/score-team/score/permissions/octocat", { role: "owner" }),
	).toMatchObject({ status: 400 });
	expect(await control("POST", "/faults", { kind: "status", status: 200 })).toMatchObject({ status: 400 });
	const notJson = await fetch(`${gh.url}/_emulator/users`, { method: "POST", body: "{" });
	expect(await notJson.json()).toMatchObject({
		code: "invalid-control-request",
		message: "The request body is not JSON.",
	});
	expect(await control("GET", "/nothing")).toMatchObject({
		status: 404,
		json: { code: "unknown-control-endpoint" },
	});
});
