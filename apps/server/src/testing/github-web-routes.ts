// GitHub's web side (GITHUB_URL): the OAuth web flow's authorize page and token endpoint, with
// GitHub's quirks kept (errors answer 200 with an `error` field; JSON only when asked for).
import { timingSafeEqual } from "node:crypto";
import type { App, EmulatorState, Route, RouteRequest } from "./github-routing";
import { avatarResponse, errorPage, signInPage } from "./github-signin-page";
import type { Grant, GrantError } from "./github-tokens";

const TROUBLESHOOTING =
	"https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors";

type TokenError = GrantError | "incorrect_client_credentials" | "unsupported_grant_type";

const TOKEN_ERRORS: Record<TokenError, { description: string; uri: string }> = {
	incorrect_client_credentials: {
		description: "The client_id and/or client_secret passed are incorrect.",
		uri: `${TROUBLESHOOTING}/#incorrect-client-credentials`,
	},
	redirect_uri_mismatch: {
		description: "The redirect_uri MUST match the registered callback URL for this application.",
		uri: `${TROUBLESHOOTING}/#redirect-uri-mismatch2`,
	},
	bad_verification_code: {
		description: "The code passed is incorrect or expired.",
		uri: `${TROUBLESHOOTING}/#bad-verification-code`,
	},
	bad_refresh_token: {
		description: "The refresh token passed is incorrect or expired.",
		uri: TROUBLESHOOTING,
	},
	unsupported_grant_type: {
		description: "The grant_type passed is not supported.",
		uri: TROUBLESHOOTING,
	},
};

interface Authorize {
	app: App;
	redirectUri: string;
	/** As the client sent it, so the sign-in form can send it back unchanged. */
	givenRedirectUri?: string;
	state?: string;
}

/** Checks an authorize request's app and redirect_uri; answers an error page when they fail. */
function checkAuthorize(state: EmulatorState, params: URLSearchParams): Authorize | Response {
	const clientId = params.get("client_id") ?? "";
	const app = state.apps.get(clientId);
	if (!app)
		return errorPage(
			404,
			"Not found",
			`No application with client_id "${clientId}" is registered in the emulator's fixture.`,
		);
	const given = params.get("redirect_uri") || undefined;
	const redirectUri = given ?? app.redirectUri;
	if (!redirectUri) {
		return errorPage(
			400,
			"Missing redirect_uri",
			"The request has no redirect_uri and the app has no callback URL in the fixture.",
		);
	}
	let target: URL;
	try {
		target = new URL(redirectUri);
	} catch {
		return errorPage(400, "Invalid redirect_uri", `The redirect_uri "${redirectUri}" is not a URL.`);
	}
	// GitHub itself compares host, port and path; the fixture's promise is the origin, so a server
	// on a random test port can register one origin and use any callback path under it.
	if (
		!/^https?:$/.test(target.protocol) ||
		(app.redirectUri && target.origin !== new URL(app.redirectUri).origin)
	) {
		return errorPage(
			400,
			"Redirect URI mismatch",
			"The redirect_uri is not associated with this application.",
		);
	}
	return { app, redirectUri, givenRedirectUri: given, state: params.get("state") ?? undefined };
}

function redirect(target: string, params: Record<string, string | undefined>): Response {
	const url = new URL(target);
	for (const [key, value] of Object.entries(params))
		if (value !== undefined) url.searchParams.set(key, value);
	return new Response(null, { status: 302, headers: { location: url.href } });
}

function approve(state: EmulatorState, request: RouteRequest, authorize: Authorize, login: string): Response {
	const user = state.world.user(login);
	if (!user)
		return errorPage(404, "Unknown account", `There is no user "${login}" in the emulator's fixture.`);
	request.login = user.login;
	const code = state.tokens.issueCode(authorize.app.clientId, user.login, authorize.redirectUri);
	return redirect(authorize.redirectUri, { code, state: authorize.state });
}

function authorizePage(state: EmulatorState, request: RouteRequest): Response {
	const authorize = checkAuthorize(state, request.url.searchParams);
	if (authorize instanceof Response) return authorize;
	const login = request.url.searchParams.get("login");
	// login= only suggests an account on GitHub; here it also picks it, so tests skip the page.
	if (login) return approve(state, request, authorize, login);
	return signInPage({
		appName: authorize.app.name ?? authorize.app.clientId,
		users: state.world.users(),
		clientId: authorize.app.clientId,
		redirectUri: authorize.givenRedirectUri,
		state: authorize.state,
	});
}

async function authorizeChoice(state: EmulatorState, request: RouteRequest): Promise<Response> {
	const form = await readParams(request.req, new URLSearchParams());
	const authorize = checkAuthorize(state, form);
	if (authorize instanceof Response) return authorize;
	if (form.get("deny")) {
		return redirect(authorize.redirectUri, {
			error: "access_denied",
			error_description: "The user has denied your application access.",
			error_uri:
				"https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#access-denied",
			state: authorize.state,
		});
	}
	const login = form.get("login");
	if (!login) return errorPage(400, "No account chosen", "Choose an account to sign in with.");
	return approve(state, request, authorize, login);
}

/** The token endpoint reads its parameters from the query string and a form or JSON body alike. */
async function readParams(req: Request, query: URLSearchParams): Promise<URLSearchParams> {
	const params = new URLSearchParams(query);
	const type = req.headers.get("content-type") ?? "";
	const text = await req.text();
	let body: URLSearchParams;
	if (type.includes("application/json")) {
		body = new URLSearchParams();
		try {
			const json: unknown = JSON.parse(text);
			if (json && typeof json === "object") {
				for (const [k, v] of Object.entries(json))
					if (typeof v === "string" || typeof v === "number") body.set(k, String(v));
			}
		} catch {
			// GitHub treats a body it cannot read as no parameters at all.
		}
	} else if (type.includes("multipart/form-data")) {
		body = new URLSearchParams();
		const form = await new Response(text, { headers: { "content-type": type } })
			.formData()
			.catch(() => new FormData());
		for (const [k, v] of form) if (typeof v === "string") body.set(k, v);
	} else {
		body = new URLSearchParams(text);
	}
	for (const [k, v] of body) params.set(k, v);
	return params;
}

function sameSecret(given: string, expected: string): boolean {
	const a = Buffer.from(given);
	const b = Buffer.from(expected);
	return a.length === b.length && timingSafeEqual(a, b);
}

/** JSON for Accept: application/json, XML for application/xml, form encoding otherwise (GitHub's default). */
function tokenResponse(req: Request, fields: Record<string, string | number>): Response {
	const accept = req.headers.get("accept") ?? "";
	if (accept.includes("application/json")) {
		return Response.json(fields, { headers: { "content-type": "application/json; charset=utf-8" } });
	}
	if (accept.includes("application/xml")) {
		const esc = (v: string | number) => String(v).replace(/[&<>]/g, (c) => `&#${c.charCodeAt(0)};`);
		const xml = `<OAuth>${Object.entries(fields)
			.map(([k, v]) => `<${k}>${esc(v)}</${k}>`)
			.join("")}</OAuth>`;
		return new Response(xml, { headers: { "content-type": "application/xml; charset=utf-8" } });
	}
	const form = new URLSearchParams(Object.entries(fields).map(([k, v]) => [k, String(v)]));
	return new Response(form.toString(), {
		headers: { "content-type": "application/x-www-form-urlencoded; charset=utf-8" },
	});
}

function grantFields(grant: Grant): Record<string, string | number> {
	return {
		access_token: grant.accessToken,
		expires_in: grant.expiresIn,
		refresh_token: grant.refreshToken,
		refresh_token_expires_in: grant.refreshTokenExpiresIn,
		scope: "",
		token_type: "bearer",
	};
}

async function accessToken(state: EmulatorState, request: RouteRequest): Promise<Response> {
	const params = await readParams(request.req, request.url.searchParams);
	const fail = (error: TokenError) =>
		tokenResponse(request.req, {
			error,
			error_description: TOKEN_ERRORS[error].description,
			error_uri: TOKEN_ERRORS[error].uri,
		});
	const app = state.apps.get(params.get("client_id") ?? "");
	if (!app || !sameSecret(params.get("client_secret") ?? "", app.clientSecret))
		return fail("incorrect_client_credentials");
	const grantType = params.get("grant_type");
	let result: Grant | GrantError;
	if (grantType === null || grantType === "authorization_code") {
		result = state.tokens.exchangeCode(
			app.clientId,
			params.get("code") ?? "",
			params.get("redirect_uri") ?? undefined,
		);
	} else if (grantType === "refresh_token") {
		result = state.tokens.refresh(app.clientId, params.get("refresh_token") ?? "");
	} else {
		return fail("unsupported_grant_type");
	}
	if (typeof result === "string") return fail(result);
	request.login = result.login;
	return tokenResponse(request.req, grantFields(result));
}

function avatar(state: EmulatorState, request: RouteRequest): Response {
	const id = Number(request.params[0]);
	const account = state.world.accountById(id);
	if (!account) return new Response("Not Found", { status: 404 });
	return avatarResponse(id, account.login);
}

export const webRoutes: readonly Route[] = [
	{ method: "GET", pattern: /^\/login\/oauth\/authorize$/, handle: authorizePage },
	{ method: "POST", pattern: /^\/login\/oauth\/authorize$/, handle: authorizeChoice },
	{ method: "POST", pattern: /^\/login\/oauth\/access_token$/, handle: accessToken },
	{ method: "GET", pattern: /^\/avatars\/u\/(\d+)$/, handle: avatar },
	{ method: "GET", pattern: /^\/favicon\.ico$/, handle: () => new Response(null, { status: 204 }) },
];
