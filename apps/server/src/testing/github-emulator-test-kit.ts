// Helpers for tests that talk to the GitHub emulator over real HTTP: a small fixture and the
// OAuth web flow done the way a server does it (authorize, follow the redirect, trade the code).
import type { GitHubEmulator } from "./github-emulator";
import type { FixtureInput } from "./github-fixture";

export const CLIENT_ID = "Iv1.testapp000000001";
export const CLIENT_SECRET = "test-secret-0123456789";
export const CALLBACK = "http://127.0.0.1:1/auth/github/callback";
export const OTHER_APP = { client_id: "Iv1.otherapp00000002", client_secret: "other-secret-0123456789" };
export const PAT = "ghp_fixtureTokenForOctocat0000000001";

export function testFixture(): FixtureInput {
	return {
		apps: [
			{ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUri: "http://127.0.0.1:1" },
			{ clientId: OTHER_APP.client_id, clientSecret: OTHER_APP.client_secret },
		],
		users: [
			{ login: "octocat", id: 583231, name: "The Octocat", orgs: ["score-team", "guild"] },
			{ login: "hubot", name: "Hubot", orgs: ["score-team"] },
			{ login: "maintainer" },
			{ login: "triager" },
			{ login: "reader" },
			{ login: "outsider" },
		],
		tokens: [{ token: PAT, login: "octocat" }],
		repositories: [
			{
				fullName: "score-team/score",
				private: true,
				permissions: {
					octocat: "admin",
					maintainer: "maintain",
					hubot: "write",
					triager: "triage",
					reader: "read",
				},
			},
			{ fullName: "octocat/hello-world", permissions: { octocat: "admin" } },
		],
	};
}

/** GET /login/oauth/authorize with login= (the test shortcut); returns the redirect's code and state. */
export async function authorize(
	gh: GitHubEmulator,
	login: string,
	state = "s-1",
): Promise<{ code: string; state: string | null }> {
	const url = new URL("/login/oauth/authorize", gh.url);
	url.search = new URLSearchParams({ client_id: CLIENT_ID, redirect_uri: CALLBACK, state, login }).toString();
	const res = await fetch(url, { redirect: "manual" });
	if (res.status !== 302) throw new Error(`authorize answered ${res.status}: ${await res.text()}`);
	const location = new URL(res.headers.get("location")!);
	return { code: location.searchParams.get("code")!, state: location.searchParams.get("state") };
}

/** POST /login/oauth/access_token asking for JSON, as a server does. */
export async function tokenRequest(
	gh: GitHubEmulator,
	params: Record<string, string>,
): Promise<Record<string, unknown>> {
	const res = await fetch(`${gh.url}/login/oauth/access_token`, {
		method: "POST",
		headers: { accept: "application/json" },
		body: new URLSearchParams(params),
	});
	if (res.status !== 200) throw new Error(`the token endpoint answered ${res.status}`);
	return (await res.json()) as Record<string, unknown>;
}

export async function signIn(gh: GitHubEmulator, login: string) {
	const { code } = await authorize(gh, login);
	const grant = await tokenRequest(gh, { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, code });
	return { accessToken: grant.access_token as string, refreshToken: grant.refresh_token as string };
}

export function api(gh: GitHubEmulator, path: string, token?: string, scheme = "Bearer"): Promise<Response> {
	return fetch(`${gh.apiUrl}${path}`, {
		headers: {
			accept: "application/vnd.github+json",
			...(token ? { authorization: `${scheme} ${token}` } : {}),
		},
	});
}
