// The emulator over real HTTP: the OAuth web flow, token lifetimes on a ManualClock, GitHub's
// token-endpoint errors, revocation, and the strict-fake check.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "../../../../packages/agent-link/src/clock";
import { type GitHubEmulator, startGitHubEmulator } from "./github-emulator";
import { EmulatorError } from "./github-emulator-errors";
import {
	api,
	authorize,
	CALLBACK,
	CLIENT_ID,
	CLIENT_SECRET,
	OTHER_APP,
	PAT,
	signIn,
	testFixture,
	tokenRequest,
} from "./github-emulator-test-kit";

let clock: ManualClock;
let gh: GitHubEmulator;

beforeEach(async () => {
	clock = new ManualClock();
	gh = await startGitHubEmulator({ fixture: testFixture(), clock });
});

afterEach(async () => {
	try {
		gh.verify();
	} finally {
		await gh.stop();
	}
});

const HOUR = 3_600_000;

describe("OAuth web flow", () => {
	test("the sign-in page lists the users; choosing one redirects with a code and the same state", async () => {
		const url = `${gh.url}/login/oauth/authorize?${new URLSearchParams({ client_id: CLIENT_ID, redirect_uri: CALLBACK, state: "st&te" })}`;
		const page = await fetch(url);
		expect(page.status).toBe(200);
		expect(page.headers.get("content-type")).toContain("text/html");
		const html = await page.text();
		expect(html).toContain("Sign in to GitHub (emulator)");
		for (const login of ["octocat", "hubot", "outsider"])
			expect(html).toContain(`name="login" value="${login}"`);
		expect(html).toContain('name="state" value="st&#38;te"');

		// What the browser posts when hubot's button is pressed.
		const choice = await fetch(`${gh.url}/login/oauth/authorize`, {
			method: "POST",
			body: new URLSearchParams({
				client_id: CLIENT_ID,
				redirect_uri: CALLBACK,
				state: "st&te",
				login: "hubot",
			}),
			redirect: "manual",
		});
		expect(choice.status).toBe(302);
		const location = new URL(choice.headers.get("location")!);
		expect(`${location.origin}${location.pathname}`).toBe(CALLBACK);
		expect(location.searchParams.get("state")).toBe("st&te");
		const code = location.searchParams.get("code")!;
		expect(code).toMatch(/^[0-9a-f]{20}$/);

		const grant = await tokenRequest(gh, { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, code });
		expect(grant).toEqual({
			access_token: expect.stringMatching(/^ghu_[A-Za-z0-9]{36}$/),
			expires_in: 28800,
			refresh_token: expect.stringMatching(/^ghr_[A-Za-z0-9]{76}$/),
			refresh_token_expires_in: 15897600,
			scope: "",
			token_type: "bearer",
		});
		const user = await api(gh, "/user", grant.access_token as string);
		expect(user.status).toBe(200);
		expect(await user.json()).toMatchObject({ login: "hubot", name: "Hubot", type: "User" });
	});

	test("login= skips the page; /user answers the signed-in user's profile", async () => {
		const { code, state } = await authorize(gh, "octocat", "xyz");
		expect(state).toBe("xyz");
		const grant = await tokenRequest(gh, { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, code });
		const res = await api(gh, "/user", grant.access_token as string);
		expect(await res.json()).toMatchObject({
			login: "octocat",
			id: 583231,
			node_id: "MDQ6VXNlcjU4MzIzMQ==",
			name: "The Octocat",
			avatar_url: `${gh.url}/avatars/u/583231?v=4`,
			type: "User",
		});
		const avatar = await fetch(`${gh.url}/avatars/u/583231?v=4`);
		expect(avatar.headers.get("content-type")).toBe("image/svg+xml");
		await avatar.text();
	});

	test("Cancel redirects with access_denied and the state", async () => {
		const res = await fetch(`${gh.url}/login/oauth/authorize`, {
			method: "POST",
			body: new URLSearchParams({ client_id: CLIENT_ID, redirect_uri: CALLBACK, state: "abc", deny: "1" }),
			redirect: "manual",
		});
		const location = new URL(res.headers.get("location")!);
		expect(location.searchParams.get("error")).toBe("access_denied");
		expect(location.searchParams.get("state")).toBe("abc");
		expect(location.searchParams.has("code")).toBe(false);
	});

	test("an unknown client_id or a redirect_uri on another origin gets an error page and no code", async () => {
		const unknown = await fetch(`${gh.url}/login/oauth/authorize?client_id=nope&login=octocat`, {
			redirect: "manual",
		});
		expect(unknown.status).toBe(404);
		expect(await unknown.text()).toContain("No application with client_id");

		const evil = `${gh.url}/login/oauth/authorize?${new URLSearchParams({ client_id: CLIENT_ID, redirect_uri: "http://evil.test/cb", login: "octocat" })}`;
		const mismatch = await fetch(evil, { redirect: "manual" });
		expect(mismatch.status).toBe(400);
		expect(mismatch.headers.get("location")).toBeNull();
		expect(await mismatch.text()).toContain("The redirect_uri is not associated with this application.");
	});

	test("without redirect_uri the app's registered callback is used", async () => {
		const res = await fetch(`${gh.url}/login/oauth/authorize?client_id=${CLIENT_ID}&login=octocat`, {
			redirect: "manual",
		});
		expect(res.headers.get("location")).toStartWith("http://127.0.0.1:1/?code=");
	});

	test("the token endpoint answers form encoding by default, XML when asked, and reads JSON bodies", async () => {
		const { code } = await authorize(gh, "octocat");
		const form = await fetch(`${gh.url}/login/oauth/access_token`, {
			method: "POST",
			headers: { "content-type": "application/json" },
			body: JSON.stringify({ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, code }),
		});
		expect(form.headers.get("content-type")).toBe("application/x-www-form-urlencoded; charset=utf-8");
		const fields = new URLSearchParams(await form.text());
		expect(fields.get("access_token")).toStartWith("ghu_");
		expect(fields.get("token_type")).toBe("bearer");

		const xml = await fetch(
			`${gh.url}/login/oauth/access_token?client_id=${CLIENT_ID}&client_secret=${CLIENT_SECRET}&code=used`,
			{
				method: "POST",
				headers: { accept: "application/xml" },
			},
		);
		expect(await xml.text()).toStartWith("<OAuth><error>bad_verification_code</error>");
	});

	test("a code works once, only for its app, only for 10 minutes", async () => {
		const creds = { client_id: CLIENT_ID, client_secret: CLIENT_SECRET };
		const first = await authorize(gh, "octocat");
		expect((await tokenRequest(gh, { ...OTHER_APP, code: first.code })).error).toBe("bad_verification_code");
		expect(await tokenRequest(gh, { ...creds, code: first.code })).toHaveProperty("access_token");
		expect(await tokenRequest(gh, { ...creds, code: first.code })).toEqual({
			error: "bad_verification_code",
			error_description: "The code passed is incorrect or expired.",
			error_uri: expect.stringContaining("#bad-verification-code"),
		});

		const late = await authorize(gh, "octocat");
		await clock.advance(10 * 60_000);
		expect((await tokenRequest(gh, { ...creds, code: late.code })).error).toBe("bad_verification_code");

		const justInTime = await authorize(gh, "octocat");
		await clock.advance(10 * 60_000 - 1);
		expect(await tokenRequest(gh, { ...creds, code: justInTime.code })).toHaveProperty("access_token");
	});

	test("wrong credentials, a different redirect_uri and an unknown grant type are refused with GitHub's errors", async () => {
		const { code } = await authorize(gh, "octocat");
		const refused = await tokenRequest(gh, { client_id: CLIENT_ID, client_secret: "wrong", code });
		expect(refused).toEqual({
			error: "incorrect_client_credentials",
			error_description: "The client_id and/or client_secret passed are incorrect.",
			error_uri: expect.any(String),
		});
		expect((await tokenRequest(gh, { client_id: "other", client_secret: CLIENT_SECRET, code })).error).toBe(
			"incorrect_client_credentials",
		);
		const creds = { client_id: CLIENT_ID, client_secret: CLIENT_SECRET };
		expect((await tokenRequest(gh, { ...creds, code, redirect_uri: "http://127.0.0.1:1/other" })).error).toBe(
			"redirect_uri_mismatch",
		);
		expect((await tokenRequest(gh, { ...creds, code, grant_type: "password" })).error).toBe(
			"unsupported_grant_type",
		);
		// The refused attempts did not use the code up.
		expect(await tokenRequest(gh, { ...creds, code, redirect_uri: CALLBACK })).toHaveProperty("access_token");
	});
});

describe("tokens", () => {
	test("a user token works for 8 hours and is refused with 401 Bad credentials after", async () => {
		const { accessToken } = await signIn(gh, "octocat");
		await clock.advance(8 * HOUR - 1);
		expect((await api(gh, "/user", accessToken)).status).toBe(200);
		await clock.advance(1);
		const res = await api(gh, "/user", accessToken);
		expect(res.status).toBe(401);
		expect(await res.json()).toEqual({
			message: "Bad credentials",
			documentation_url: "https://docs.github.com/rest",
			status: "401",
		});
	});

	test("a refresh rotates the pair: the old refresh token and the old access token stop working", async () => {
		const creds = { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, grant_type: "refresh_token" };
		const first = await signIn(gh, "octocat");
		await clock.advance(7 * HOUR);
		const second = await tokenRequest(gh, { ...creds, refresh_token: first.refreshToken });
		expect(second).toMatchObject({
			expires_in: 28800,
			refresh_token_expires_in: 15897600,
			token_type: "bearer",
		});
		expect(second.refresh_token).not.toBe(first.refreshToken);

		expect((await api(gh, "/user", second.access_token as string)).status).toBe(200);
		expect((await api(gh, "/user", first.accessToken)).status).toBe(401);
		expect(await tokenRequest(gh, { ...creds, refresh_token: first.refreshToken })).toEqual({
			error: "bad_refresh_token",
			error_description: "The refresh token passed is incorrect or expired.",
			error_uri: expect.any(String),
		});
		// The new pair's 8 hours start at the refresh.
		await clock.advance(8 * HOUR - 1);
		expect((await api(gh, "/user", second.access_token as string)).status).toBe(200);
	});

	test("a refresh token is refused with a wrong secret or another app's credentials", async () => {
		const { refreshToken } = await signIn(gh, "octocat");
		const refresh = (secret: string) =>
			tokenRequest(gh, {
				client_id: CLIENT_ID,
				client_secret: secret,
				grant_type: "refresh_token",
				refresh_token: refreshToken,
			});
		expect((await refresh("wrong")).error).toBe("incorrect_client_credentials");
		const otherApp = await tokenRequest(gh, {
			...OTHER_APP,
			grant_type: "refresh_token",
			refresh_token: refreshToken,
		});
		expect(otherApp.error).toBe("bad_refresh_token");
		await clock.advance(15_897_600 * 1000 - 1);
		expect(await refresh(CLIENT_SECRET)).toHaveProperty("access_token");
	});

	test("a refresh token is refused once its lifetime has passed", async () => {
		const { refreshToken } = await signIn(gh, "octocat");
		const refresh = (secret: string) =>
			tokenRequest(gh, {
				client_id: CLIENT_ID,
				client_secret: secret,
				grant_type: "refresh_token",
				refresh_token: refreshToken,
			});
		await clock.advance(15_897_600 * 1000);
		expect((await refresh(CLIENT_SECRET)).error).toBe("bad_refresh_token");
	});

	test("revoked and expired tokens answer 401; revoking the authorization kills the refresh token too", async () => {
		const a = await signIn(gh, "octocat");
		gh.revokeToken(a.accessToken);
		expect((await api(gh, "/user", a.accessToken)).status).toBe(401);

		const b = await signIn(gh, "hubot");
		gh.expireToken(b.accessToken);
		expect((await api(gh, "/user", b.accessToken)).status).toBe(401);

		const c = await signIn(gh, "hubot");
		gh.revokeAuthorization("hubot", CLIENT_ID);
		expect((await api(gh, "/user", c.accessToken)).status).toBe(401);
		const refreshed = await tokenRequest(gh, {
			client_id: CLIENT_ID,
			client_secret: CLIENT_SECRET,
			grant_type: "refresh_token",
			refresh_token: c.refreshToken,
		});
		expect(refreshed.error).toBe("bad_refresh_token");
		expect(() => gh.revokeToken("ghu_never")).toThrow(EmulatorError);
	});

	test("fixture tokens work with both schemes; expiresAt is honoured; no or bad credentials are refused", async () => {
		expect((await api(gh, "/user", PAT, "token")).status).toBe(200);
		expect((await api(gh, "/user", PAT, "bearer")).status).toBe(200);
		const short = gh.addToken({ login: "reader", expiresAt: clock.now() + 1000 });
		expect((await api(gh, "/user", short)).status).toBe(200);
		await clock.advance(1000);
		expect((await api(gh, "/user", short)).status).toBe(401);

		const anonymous = await api(gh, "/user");
		expect(anonymous.status).toBe(401);
		expect(((await anonymous.json()) as { message: string }).message).toBe("Requires authentication");
		const garbled = await fetch(`${gh.apiUrl}/user`, { headers: { authorization: "Basic Zm9vOmJhcg==" } });
		expect(garbled.status).toBe(401);
		await garbled.text();
	});
});

describe("strictness and the request log", () => {
	test("an unexpected call answers 404 Not Found and makes verify() throw, naming it", async () => {
		const rootUser = await fetch(`${gh.url}/user`, { headers: { authorization: `Bearer ${PAT}` } });
		expect(rootUser.status).toBe(404);
		expect(((await rootUser.json()) as { message: string }).message).toBe("Not Found");
		const del = await fetch(`${gh.apiUrl}/repos/score-team/score`, { method: "DELETE" });
		expect(del.status).toBe(404);
		await del.text();

		let error: unknown;
		try {
			gh.verify();
		} catch (err) {
			error = err;
		}
		expect(error).toBeInstanceOf(EmulatorError);
		expect((error as EmulatorError).code).toBe("unexpected-calls");
		expect((error as EmulatorError).message).toContain("GET /user, DELETE /api/v3/repos/score-team/score");
		gh.clearRequests();
		gh.verify();
	});

	test("the log records method, path and user, and masks codes and secrets", async () => {
		const { accessToken } = await signIn(gh, "octocat");
		await api(gh, "/user", accessToken);
		await api(gh, "/user", accessToken);
		expect(gh.requests({ method: "GET", path: "/api/v3/user", login: "octocat" })).toHaveLength(2);
		const [authorizeCall, tokenCall] = gh.requests({ path: /^\/login\/oauth\// });
		expect(authorizeCall).toMatchObject({ method: "GET", login: "octocat", status: 302, unexpected: false });
		expect(authorizeCall!.query.login).toBe("octocat");
		expect(tokenCall).toMatchObject({ method: "POST", path: "/login/oauth/access_token", login: "octocat" });
		await fetch(`${gh.url}/login/oauth/access_token?code=secret-code&client_secret=s3cret`, {
			method: "POST",
		}).then((r) => r.text());
		expect(gh.requests().at(-1)!.query).toEqual({ code: "[redacted]", client_secret: "[redacted]" });
	});
});
