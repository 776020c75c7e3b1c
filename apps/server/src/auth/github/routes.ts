// GitHub sign-in in the browser: /auth/github/start sends the browser to GitHub, /auth/github/callback comes back with a code and makes a session.
import type { AppContext } from "../../context";
import { clearCookie, readCookies, serializeCookie } from "../../http/cookies";
import { HttpError } from "../../http/errors";
import type { Router } from "../../http/router";
import { loginSchema } from "../../local-accounts";
import { IdentityError, isIdentityError } from "../errors";
import { githubUnavailable, notAdmitted, safeNext } from "../guards";
import type { GitHubIdentity } from "../identity";
import { problemResponse } from "../problem-page";
import { SecretBox } from "../secret-box";
import { SESSION_COOKIE } from "../sessions";
import { GitHubError } from "./client";
import { OAuthStates, STATE_COOKIE, STATE_COOKIE_PATH, STATE_TTL_MS } from "./oauth-state";

export function registerGitHubAuthRoutes(router: Router, ctx: AppContext, identity: GitHubIdentity): void {
	const states = new OAuthStates(new SecretBox(ctx.secretKey.reveal()), ctx.clock);
	const callbackUrl = () => `${ctx.config.publicUrl}/auth/github/callback`;

	router.get("/auth/github/start", async ({ url }) => {
		const publicUrl = ctx.config.publicUrl;
		const next = safeNext(url.searchParams.get("next"), publicUrl);
		const intent = url.searchParams.get("intent") ?? undefined;
		if (intent !== undefined && !identity.grantHandlers.has(intent)) {
			throw new HttpError(
				400,
				"invalid-request",
				`The field "intent" is invalid: no such sign-in intent.`,
				undefined,
				{
					field: "intent",
				},
			);
		}
		// GitHub only suggests this account on its page; a bad value is simply not passed on.
		const hint = url.searchParams.get("login");
		const login = hint && loginSchema.safeParse(hint).success ? hint : undefined;
		const { state, cookie } = await states.issue(next, intent);
		return new Response(null, {
			status: 302,
			headers: {
				location: identity.client.authorizeUrl({ redirectUri: callbackUrl(), state, login }),
				"set-cookie": serializeCookie(publicUrl, STATE_COOKIE, cookie, {
					maxAge: STATE_TTL_MS / 1000,
					path: STATE_COOKIE_PATH,
				}),
				"cache-control": "no-store",
			},
		});
	});

	router.get("/auth/github/callback", async ({ req, url }) => {
		const publicUrl = ctx.config.publicUrl;
		// The state cookie is single use whatever happens next.
		const cleared = clearCookie(publicUrl, STATE_COOKIE, { path: STATE_COOKIE_PATH });
		try {
			const pending = await states.consume(readCookies(req).get(STATE_COOKIE), url.searchParams.get("state"));
			if (url.searchParams.get("error")) {
				throw new HttpError(
					403,
					"sign-in-cancelled",
					"The sign-in was cancelled at GitHub.",
					"Sign in again to use Chopin.",
				);
			}
			const code = url.searchParams.get("code");
			if (!code) throw codeInvalid();
			const { account, authorization } = await signInWith(identity, code, callbackUrl(), ctx);
			if (!(await admittedOr503(identity, authorization))) {
				ctx.log.info("sign-in refused: not admitted", { login: account.login });
				throw notAdmitted(account.login);
			}
			if (pending.intent) {
				const handler = identity.grantHandlers.get(pending.intent);
				if (!handler) throw codeInvalid();
				const res = await handler({ account, authorization, req, next: pending.next });
				res.headers.append("set-cookie", cleared);
				return res;
			}
			const { cookie } = await ctx.sessions.create(account, authorization);
			const headers = new Headers({ location: pending.next, "cache-control": "no-store" });
			headers.append("set-cookie", cleared);
			headers.append(
				"set-cookie",
				serializeCookie(publicUrl, SESSION_COOKIE, cookie, {
					maxAge: Math.floor(ctx.config.sessionTtlMs / 1000),
				}),
			);
			return new Response(null, { status: 302, headers });
		} catch (error) {
			if (!(error instanceof HttpError)) throw error;
			return problemResponse(req, error, {
				cookies: [cleared],
				retry: { href: "/auth/github/start", label: "Sign in with GitHub" },
			});
		}
	});
}

async function signInWith(identity: GitHubIdentity, code: string, redirectUri: string, ctx: AppContext) {
	try {
		return await identity.signIn(code, redirectUri);
	} catch (error) {
		if (isIdentityError(error, "unauthorized")) throw codeInvalid();
		if (isIdentityError(error, "unavailable")) throw githubUnavailable(error.retryAfterMs);
		if (error instanceof GitHubError && error.kind === "unexpected") {
			// incorrect_client_credentials, redirect_uri_mismatch: only the operator can fix these.
			ctx.log.error("github sign-in failed: check the GitHub App settings", { error });
			throw new HttpError(
				500,
				"github-app-misconfigured",
				"GitHub refused this server's sign-in request.",
				"Tell the server's operator: GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET or the callback URL do not match the GitHub App.",
			);
		}
		throw error;
	}
}

async function admittedOr503(
	identity: GitHubIdentity,
	authorization: Parameters<GitHubIdentity["admitted"]>[0],
) {
	try {
		return await identity.admitted(authorization);
	} catch (error) {
		if (error instanceof IdentityError && error.code === "unavailable")
			throw githubUnavailable(error.retryAfterMs);
		throw error;
	}
}

function codeInvalid(): HttpError {
	return new HttpError(
		400,
		"oauth-code-invalid",
		"GitHub did not accept the sign-in code; it may have expired or been used.",
		"Start the sign-in again.",
	);
}
