// The JSON GitHub's REST API answers with (users, organizations, repositories, errors) and the
// headers it sets, reduced to the fields a client plausibly reads but spelled exactly as GitHub does.
import type { GitHubWorld, Org, Permissions, Repository, User } from "./github-world";

/** Where the REST API lives under the emulator's origin, as on GitHub Enterprise Server. */
export const API_PREFIX = "/api/v3";

export interface Urls {
	/** GITHUB_URL: the web origin (sign-in pages, the token endpoint). */
	web: string;
	/** GITHUB_API_URL: the REST API base, no trailing slash. */
	api: string;
}

export const REST_DOCS = "https://docs.github.com/rest";

/** GitHub's legacy global node ids, base64 of "<length>:<Type><id>". */
function nodeId(type: "User" | "Organization" | "Repository", id: number): string {
	const kind = { User: "04:User", Organization: "012:Organization", Repository: "010:Repository" }[type];
	return Buffer.from(`${kind}${id}`).toString("base64");
}

/** Avatars come from the emulator itself, so a page under test never reaches for the internet. */
export function avatarUrl(urls: Urls, id: number): string {
	return `${urls.web}/avatars/u/${id}?v=4`;
}

function accountJson(urls: Urls, login: string, id: number, type: "User" | "Organization") {
	return {
		login,
		id,
		node_id: nodeId(type, id),
		avatar_url: avatarUrl(urls, id),
		gravatar_id: "",
		url: `${urls.api}/${type === "User" ? "users" : "orgs"}/${login}`,
		html_url: `${urls.web}/${login}`,
		type,
		site_admin: false,
	};
}

/** GET /user: the authenticated user (public profile fields; email stays private as by default). */
export function userJson(urls: Urls, user: User) {
	return { ...accountJson(urls, user.login, user.id, "User"), name: user.name, email: null };
}

/** An item of GET /user/orgs. */
export function orgJson(urls: Urls, org: Org) {
	const url = `${urls.api}/orgs/${org.login}`;
	return {
		login: org.login,
		id: org.id,
		node_id: nodeId("Organization", org.id),
		url,
		repos_url: `${url}/repos`,
		events_url: `${url}/events`,
		hooks_url: `${url}/hooks`,
		issues_url: `${url}/issues`,
		members_url: `${url}/members{/member}`,
		public_members_url: `${url}/public_members{/member}`,
		avatar_url: avatarUrl(urls, org.id),
		description: null,
	};
}

/** GET /repos/{owner}/{repo}; permissions only when the caller is authenticated, as on GitHub. */
export function repositoryJson(urls: Urls, world: GitHubWorld, repo: Repository, permissions?: Permissions) {
	const user = world.user(repo.owner);
	const owner = user
		? accountJson(urls, user.login, user.id, "User")
		: accountJson(urls, repo.owner, world.org(repo.owner)?.id ?? 0, "Organization");
	return {
		id: repo.id,
		node_id: nodeId("Repository", repo.id),
		name: repo.name,
		full_name: repo.fullName,
		private: repo.private,
		owner,
		html_url: `${urls.web}/${repo.fullName}`,
		description: repo.description,
		fork: false,
		url: `${urls.api}/repos/${repo.fullName}`,
		default_branch: repo.defaultBranch,
		visibility: repo.private ? "private" : "public",
		archived: false,
		disabled: false,
		...(permissions ? { permissions } : {}),
	};
}

/** GitHub's error body: message, documentation_url and the status as a string. */
export function errorBody(status: number, message: string, documentationUrl = REST_DOCS) {
	return { message, documentation_url: documentationUrl, status: String(status) };
}

export function requestId(): string {
	const hex = Buffer.from(crypto.getRandomValues(new Uint8Array(10)))
		.toString("hex")
		.toUpperCase();
	return `${hex.slice(0, 4)}:${hex.slice(4, 8)}:${hex.slice(8, 14)}:${hex.slice(14, 20)}`;
}

/** A REST API JSON answer with the headers every GitHub API response carries. */
export function apiResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
	return new Response(body === undefined ? null : JSON.stringify(body), {
		status,
		headers: {
			...(body === undefined ? {} : { "content-type": "application/json; charset=utf-8" }),
			"x-github-media-type": "github.v3; format=json",
			"x-github-request-id": requestId(),
			vary: "Accept, Authorization, Cookie, X-GitHub-OTP",
			...headers,
		},
	});
}
