// GitHub's REST API (GITHUB_API_URL): the few endpoints the Chopin server calls, with GitHub's
// authentication, rate-limit headers, ETags and its 404-not-403 rule for what a caller cannot see.
import { type Caller, primaryLimitResponse, rateHeaders } from "./github-rate-limit";
import type { EmulatorState, Route, RouteRequest } from "./github-routing";
import { API_PREFIX, apiResponse, errorBody, orgJson, repositoryJson, userJson } from "./github-shapes";
import type { User } from "./github-world";

/** A handler's answer before the common headers are added. */
interface ApiAnswer {
	status: number;
	body?: unknown;
	headers?: Record<string, string>;
}

type ApiHandler = (state: EmulatorState, user: User | null, params: string[]) => ApiAnswer;

type Auth = { kind: "anonymous" } | { kind: "user"; user: User; token: string } | { kind: "bad" };

/** Both schemes GitHub accepts, `Bearer` and the older `token`, case-insensitively. */
function authenticate(state: EmulatorState, req: Request): Auth {
	const header = req.headers.get("authorization");
	if (header === null) return { kind: "anonymous" };
	const m = /^(?:bearer|token)\s+(\S+)\s*$/i.exec(header);
	const login = m ? state.tokens.resolve(m[1]!) : undefined;
	const user = login ? state.world.user(login) : undefined;
	return user ? { kind: "user", user, token: m![1]! } : { kind: "bad" };
}

/**
 * A weak ETag over the answer and the token that asked: GitHub's answers vary by Authorization, and
 * an If-None-Match from one token never matches for another (github/docs#34689), even the same user's.
 */
function etagOf(auth: Auth, body: unknown): string {
	const asker = auth.kind === "user" ? new Bun.CryptoHasher("sha256").update(auth.token).digest("hex") : "";
	return `W/"${Bun.hash(`${asker}\n${JSON.stringify(body)}`).toString(16)}"`;
}

const CREDENTIAL = { anonymous: "none", user: "valid", bad: "invalid" } as const;

const notFound = (docs: string): ApiAnswer => ({ status: 404, body: errorBody(404, "Not Found", docs) });
const requiresAuth = (docs: string): ApiAnswer => ({
	status: 401,
	body: errorBody(401, "Requires authentication", docs),
});

const DOCS = {
	user: "https://docs.github.com/rest/users/users#get-the-authenticated-user",
	orgs: "https://docs.github.com/rest/orgs/orgs#list-organizations-for-the-authenticated-user",
	member: "https://docs.github.com/rest/orgs/members#check-organization-membership-for-a-user",
	publicMember: "https://docs.github.com/rest/orgs/members#check-public-organization-membership-for-a-user",
	repo: "https://docs.github.com/rest/repos/repos#get-a-repository",
};

const getUser: ApiHandler = (state, user) =>
	user ? { status: 200, body: userJson(state.urls, user) } : requiresAuth(DOCS.user);

const getUserOrgs: ApiHandler = (state, user) => {
	if (!user) return requiresAuth(DOCS.orgs);
	const orgs = user.orgs.map((login) => state.world.org(login)).filter((o) => o !== undefined);
	return { status: 200, body: orgs.map((org) => orgJson(state.urls, org)) };
};

/**
 * A member may ask about fellow members (204 or 404). Anyone else is redirected to the public
 * membership check, as GitHub does; the emulator treats every membership as public.
 */
const getOrgMember: ApiHandler = (state, user, [orgLogin = "", username = ""]) => {
	const org = state.world.org(orgLogin);
	if (!org) return notFound(DOCS.member);
	if (!user || !state.world.isMember(org, user.login)) {
		return {
			status: 302,
			headers: { location: `${state.urls.api}/orgs/${org.login}/public_members/${username}` },
		};
	}
	if (state.world.isMember(org, username)) return { status: 204 };
	return {
		status: 404,
		body: errorBody(404, "User does not exist or is not a member of the organization", DOCS.member),
	};
};

const getPublicMember: ApiHandler = (state, _user, [orgLogin = "", username = ""]) => {
	const org = state.world.org(orgLogin);
	return org && state.world.isMember(org, username) ? { status: 204 } : notFound(DOCS.publicMember);
};

const getRepository: ApiHandler = (state, user, [owner = "", name = ""]) => {
	const repo = state.world.repository(owner, name);
	const permissions = repo ? state.world.access(repo, user?.login ?? null) : undefined;
	if (!repo || !permissions) return notFound(DOCS.repo);
	return { status: 200, body: repositoryJson(state.urls, state.world, repo, user ? permissions : undefined) };
};

/** Everything every API endpoint shares: User-Agent rule, credentials, rate limit, ETag. */
function api(handler: ApiHandler): Route["handle"] {
	return (state: EmulatorState, request: RouteRequest) => {
		const { req } = request;
		if (!req.headers.get("user-agent")) {
			return new Response(
				"Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/rest/overview/resources-in-the-rest-api#user-agent-required).",
				{ status: 403, headers: { "content-type": "text/plain; charset=utf-8" } },
			);
		}
		const auth = authenticate(state, req);
		const caller: Caller = auth.kind === "user" ? { kind: "user", id: auth.user.id } : { kind: "anonymous" };
		if (auth.kind === "user") request.login = auth.user.login;
		request.credential = CREDENTIAL[auth.kind];
		const before = state.rates.state(caller, false);
		if (before.used >= before.limit) return primaryLimitResponse(caller, before);
		// Bad credentials are refused before any endpoint logic, whatever the endpoint.
		const answer: ApiAnswer =
			auth.kind === "bad"
				? { status: 401, body: errorBody(401, "Bad credentials") }
				: handler(state, auth.kind === "user" ? auth.user : null, request.params);
		let etag: string | undefined;
		if (answer.status === 200 && answer.body !== undefined) {
			etag = etagOf(auth, answer.body);
			const match = req.headers.get("if-none-match");
			// A 304 does not count against the rate limit on GitHub.
			if (match?.split(",").some((t) => t.trim() === etag)) {
				return apiResponse(undefined, 304, { etag, ...rateHeaders(before) });
			}
		}
		const after = state.rates.state(caller, true);
		return apiResponse(answer.body, answer.status, {
			...rateHeaders(after),
			...(etag ? { etag } : {}),
			...answer.headers,
		});
	};
}

const seg = "([^/]+)";

export const apiRoutes: readonly Route[] = [
	{ method: "GET", pattern: new RegExp(`^${API_PREFIX}/user$`), handle: api(getUser) },
	{ method: "GET", pattern: new RegExp(`^${API_PREFIX}/user/orgs$`), handle: api(getUserOrgs) },
	{
		method: "GET",
		pattern: new RegExp(`^${API_PREFIX}/orgs/${seg}/members/${seg}$`),
		handle: api(getOrgMember),
	},
	{
		method: "GET",
		pattern: new RegExp(`^${API_PREFIX}/orgs/${seg}/public_members/${seg}$`),
		handle: api(getPublicMember),
	},
	{ method: "GET", pattern: new RegExp(`^${API_PREFIX}/repos/${seg}/${seg}$`), handle: api(getRepository) },
];
