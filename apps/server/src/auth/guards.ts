// Route helpers: who is signed in (optionalUser/requireUser), what they may do with a repository (requirePermission), and the cookie CSRF rule.
import type { AppContext } from "../context";
import { isJsonContentType } from "../http/body";
import { clearCookie, readCookies } from "../http/cookies";
import { HttpError } from "../http/errors";
import { type Authorization, permits, type RepoPermission } from "./authorization";
import { isIdentityError } from "./errors";
import { GitHubAuthorization } from "./github/authorization";
import { SESSION_COOKIE } from "./sessions";

/** A signed-in person, as routes see them. */
export interface SignedInUser {
	readonly login: string;
	readonly name: string | null;
	readonly avatarUrl: string | null;
	readonly sessionId: string;
	readonly authorization: Authorization;
}

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** One lookup per request, however many guards ask. */
const resolved = new WeakMap<Request, Promise<SignedInUser | null>>();

/**
 * The signed-in person, or null. A cookie-authenticated POST, PUT, PATCH or DELETE must come
 * from our own pages (see assertSameOrigin). A GitHub token within five minutes of expiry is
 * renewed here, on use; a GitHub outage meanwhile leaves the session as it is.
 */
export function optionalUser(ctx: AppContext, req: Request): Promise<SignedInUser | null> {
	let pending = resolved.get(req);
	if (!pending) {
		pending = findUser(ctx, req);
		resolved.set(req, pending);
	}
	return pending;
}

async function findUser(ctx: AppContext, req: Request): Promise<SignedInUser | null> {
	const cookie = readCookies(req).get(SESSION_COOKIE);
	if (!cookie) return null;
	if (UNSAFE.has(req.method.toUpperCase())) assertSameOrigin(req, ctx.config.publicUrl);
	const signIn = await ctx.sessions.resolve(cookie);
	if (!signIn) return null;
	const { authorization } = signIn;
	if (authorization instanceof GitHubAuthorization && authorization.isDue()) {
		try {
			await authorization.renewIfDue();
		} catch (error) {
			// An ended authorization has ended its session (Sessions listens); anything else waits for the next use.
			if (isIdentityError(error, "authorization-expired")) return null;
			if (!isIdentityError(error, "unavailable")) throw error;
			ctx.log.warn("github token renewal deferred", { login: signIn.login, error });
		}
	}
	return {
		login: signIn.login,
		name: signIn.name,
		avatarUrl: signIn.avatarUrl,
		sessionId: signIn.sessionId,
		authorization,
	};
}

/**
 * The signed-in person. Otherwise: 401 sign-in-required as JSON under /api/ (and for anything
 * but a page GET), or a redirect to the sign-in page, back to this page afterwards.
 */
export async function requireUser(ctx: AppContext, req: Request): Promise<SignedInUser> {
	const user = await optionalUser(ctx, req);
	if (user) return user;
	const url = new URL(req.url);
	const hadCookie = readCookies(req).has(SESSION_COOKIE);
	// A stale cookie is removed, so the browser stops sending it.
	const headers: Record<string, string> = hadCookie
		? { "set-cookie": clearCookie(ctx.config.publicUrl, SESSION_COOKIE) }
		: {};
	const method = req.method.toUpperCase();
	if (!url.pathname.startsWith("/api/") && (method === "GET" || method === "HEAD")) {
		headers.location = signInUrl(ctx, `${url.pathname}${url.search}`);
		throw new HttpError(302, "sign-in-required", "Sign in to see this page.", undefined, undefined, headers);
	}
	throw signInRequired(headers);
}

export function signInRequired(headers?: Record<string, string>): HttpError {
	return new HttpError(
		401,
		"sign-in-required",
		"You are not signed in to Chopin.",
		"Sign in and try again.",
		undefined,
		headers,
	);
}

/** Where a page sends someone to sign in: GitHub's flow directly, or the local sign-in page. */
export function signInUrl(ctx: AppContext, next: string): string {
	const path = ctx.identity.mode === "github" ? "/auth/github/start" : "/sign-in";
	return `${path}?${new URLSearchParams({ next })}`;
}

/**
 * The person's access to `owner/name`, at least `need`. 404 not-found when they have none (so
 * a private repository's existence is not revealed), 403 repository-forbidden when it is too
 * little, 503 github-unavailable when GitHub cannot answer, 401 when their authorization died.
 */
export async function requirePermission(
	ctx: AppContext,
	user: SignedInUser,
	repository: string,
	need: "read" | "write",
): Promise<RepoPermission> {
	let permission: RepoPermission;
	try {
		permission = await ctx.identity.permission(user.authorization, repository);
	} catch (error) {
		if (isIdentityError(error, "unavailable")) throw githubUnavailable(error.retryAfterMs);
		if (isIdentityError(error, "authorization-expired") || isIdentityError(error, "unauthorized")) {
			throw signInRequired();
		}
		throw error;
	}
	if (permission === "none") {
		throw new HttpError(404, "not-found", `There is no repository ${repository}, or you cannot see it.`);
	}
	if (!permits(permission, need)) {
		throw new HttpError(
			403,
			"repository-forbidden",
			`You need ${need === "write" ? "push" : "read"} access to ${repository} for this.`,
			"Ask a repository administrator for access.",
		);
	}
	return permission;
}

/** 503 github-unavailable, with Retry-After when GitHub said how long. */
export function githubUnavailable(retryAfterMs?: number): HttpError {
	const seconds = retryAfterMs === undefined ? undefined : Math.max(1, Math.ceil(retryAfterMs / 1000));
	return new HttpError(
		503,
		"github-unavailable",
		"GitHub is unavailable or rate limiting Chopin.",
		"Try again in a minute.",
		seconds === undefined ? undefined : { retryAfter: seconds },
		seconds === undefined ? undefined : { "retry-after": String(seconds) },
	);
}

/**
 * CSRF: a cookie-authenticated write must carry our own Origin, or (when a browser sends no
 * Origin) a JSON content type, which a cross-site form cannot send without a CORS preflight we
 * never grant. Anything else is 403 origin-forbidden.
 */
export function assertSameOrigin(req: Request, publicUrl: string): void {
	const origin = req.headers.get("origin");
	if (origin === publicUrl) return;
	if (origin === null && isJsonContentType(req.headers.get("content-type"))) return;
	throw new HttpError(
		403,
		"origin-forbidden",
		origin === null
			? "This request does not say which site it comes from."
			: "This request comes from another site.",
		`Open ${publicUrl} instead.`,
	);
}

/** 403 not-admitted: the account is not on ADMIT (by login or organization). */
export function notAdmitted(login: string): HttpError {
	return new HttpError(
		403,
		"not-admitted",
		`${login} is not admitted to this Chopin server.`,
		"Ask the server's operator to add you (or your organization) to ADMIT.",
	);
}

/**
 * Where to go after signing in: a path on this origin, or "/" for anything else (another
 * origin, a scheme-relative `//host`, a backslash trick, control characters).
 */
export function safeNext(next: string | null, publicUrl: string): string {
	if (
		!next ||
		next.length > 2048 ||
		!next.startsWith("/") ||
		/^\/[/\\]/.test(next) ||
		next.includes("\\") ||
		[...next].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)
	) {
		return "/";
	}
	try {
		const url = new URL(next, publicUrl);
		return url.origin === new URL(publicUrl).origin ? `${url.pathname}${url.search}${url.hash}` : "/";
	} catch {
		return "/";
	}
}
