// The server's GitHub HTTP client: the OAuth web flow's token endpoint and the few REST calls identity needs, every failure classified one way.
import type { Clock } from "@chopin/agent-link/clock";
import { z } from "zod";
import { repositoryNameSchema } from "../../local-accounts";
import type { Logger } from "../../log";
import type { Secret } from "../../secret";
import { ETags } from "./etags";

/** How every GitHub failure is reported, whichever call met it. */
export type GitHubFailure =
	/** 401, or a code or refresh token the token endpoint refused. */
	| "unauthorized"
	/** 403 that is not a rate limit (SSO enforcement, an app without access). */
	| "forbidden"
	| "not-found"
	/** 5xx, a rate limit, a timeout or no connection: worth trying again later. */
	| "unavailable"
	/** An answer we did not plan for (a 422, a body of the wrong shape, a misconfigured app). */
	| "unexpected";

export class GitHubError extends Error {
	constructor(
		readonly kind: GitHubFailure,
		message: string,
		readonly details: {
			status?: number;
			/** How long GitHub asked us to wait (Retry-After, or until x-ratelimit-reset). */
			retryAfterMs?: number;
			/** The token endpoint's `error`, e.g. bad_refresh_token. */
			oauthError?: string;
			cause?: unknown;
		} = {},
	) {
		super(message, { cause: details.cause });
		this.name = "GitHubError";
	}
}

export interface GitHubClientOptions {
	/** GITHUB_URL: the web side (OAuth pages and token endpoint). */
	webUrl: string;
	/** GITHUB_API_URL: the REST base, e.g. https://api.github.com or https://ghe.example/api/v3. */
	apiUrl: string;
	clientId?: string;
	clientSecret?: Secret;
	fetch: typeof fetch;
	clock: Clock;
	log: Logger;
	/** Sent on every request: GitHub refuses API calls without one. */
	userAgent: string;
	/** A call that has not answered by then is `unavailable` (default 10 s, on the injected clock). */
	timeoutMs?: number;
}

/** A token pair as the token endpoint grants it; times are milliseconds since the epoch, null when it never expires. */
export interface Grant {
	accessToken: string;
	refreshToken: string | null;
	expiresAt: number | null;
	refreshExpiresAt: number | null;
}

const grantSchema = z.object({
	access_token: z.string().min(1),
	token_type: z.string().optional(),
	expires_in: z.coerce.number().int().positive().optional(),
	refresh_token: z.string().min(1).optional(),
	refresh_token_expires_in: z.coerce.number().int().positive().optional(),
});

const tokenErrorSchema = z.object({ error: z.string(), error_description: z.string().optional() });

export const githubUserSchema = z.object({
	login: z.string().min(1),
	id: z.number().int(),
	name: z.string().nullable().optional(),
	avatar_url: z.string().nullable().optional(),
});
export type GitHubUser = z.infer<typeof githubUserSchema>;

const orgsSchema = z.array(z.object({ login: z.string().min(1) }));

export const githubRepositorySchema = z.object({
	full_name: z.string(),
	permissions: z
		.object({
			admin: z.boolean(),
			maintain: z.boolean().optional(),
			push: z.boolean(),
			triage: z.boolean().optional(),
			pull: z.boolean(),
		})
		.optional(),
});
export type GitHubRepository = z.infer<typeof githubRepositorySchema>;

/** Appends a path to a base URL, keeping the base's own path: joinUrl("https://ghe/api/v3", "/user"). */
export function joinUrl(base: string, path: string): string {
	return `${base.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}

const TOKEN_PATH = "/login/oauth/access_token";

export class GitHubClient {
	readonly #o: GitHubClientOptions;
	/** Every GET is conditional once GitHub gave an ETag for the same token and path (see etags.ts). */
	readonly #etags = new ETags();

	constructor(options: GitHubClientOptions) {
		this.#o = options;
	}

	/** Where a browser starts the OAuth web flow. `login` only suggests an account on GitHub. */
	authorizeUrl(params: { redirectUri: string; state: string; login?: string }): string {
		const url = new URL(joinUrl(this.#o.webUrl, "/login/oauth/authorize"));
		url.searchParams.set("client_id", this.#requireApp().clientId);
		url.searchParams.set("redirect_uri", params.redirectUri);
		url.searchParams.set("state", params.state);
		if (params.login) url.searchParams.set("login", params.login);
		return url.href;
	}

	/** Trades a code from the callback for a token pair. */
	exchangeCode(code: string, redirectUri: string): Promise<Grant> {
		return this.#token({ code, redirect_uri: redirectUri });
	}

	/** Rotates a pair with the refresh grant; GitHub then refuses the old refresh and access tokens. */
	refresh(refreshToken: string): Promise<Grant> {
		return this.#token({ grant_type: "refresh_token", refresh_token: refreshToken });
	}

	/** GET /user. */
	async user(token: string): Promise<GitHubUser> {
		return this.#api(token, "/user", githubUserSchema);
	}

	/** GET /user/orgs: the logins of the user's organizations. */
	async organizations(token: string): Promise<string[]> {
		return (await this.#api(token, "/user/orgs?per_page=100", orgsSchema)).map((o) => o.login);
	}

	/** GET /repos/{owner}/{repo}, with `permissions` for the token's user. */
	async repository(token: string, fullName: string): Promise<GitHubRepository> {
		if (!repositoryNameSchema.safeParse(fullName).success) {
			throw new GitHubError("not-found", `"${fullName}" is not a repository name.`);
		}
		const [owner, name] = fullName.split("/") as [string, string];
		return this.#api(
			token,
			`/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}`,
			githubRepositorySchema,
		);
	}

	#requireApp(): { clientId: string; clientSecret: Secret } {
		const { clientId, clientSecret } = this.#o;
		if (!clientId || !clientSecret) throw new Error("GitHubClient: GITHUB_CLIENT_ID and SECRET are not set");
		return { clientId, clientSecret };
	}

	async #token(params: Record<string, string>): Promise<Grant> {
		const app = this.#requireApp();
		const body = new URLSearchParams({
			client_id: app.clientId,
			client_secret: app.clientSecret.reveal(),
			...params,
		});
		const asked = this.#o.clock.now();
		const res = await this.#send("POST", joinUrl(this.#o.webUrl, TOKEN_PATH), TOKEN_PATH, {
			accept: "application/json",
			"content-type": "application/x-www-form-urlencoded",
			body: body.toString(),
		});
		if (res.status !== 200) throw await this.#failure(res, TOKEN_PATH);
		const json = await readJson(res, TOKEN_PATH);
		// GitHub answers 200 to a refused grant, with an `error` field.
		const refusal = tokenErrorSchema.safeParse(json);
		if (refusal.success) {
			const error = refusal.data.error;
			if (error === "bad_verification_code" || error === "bad_refresh_token") {
				throw new GitHubError("unauthorized", `GitHub refused the grant (${error}).`, { oauthError: error });
			}
			// incorrect_client_credentials, redirect_uri_mismatch, ...: the server's configuration is wrong.
			throw new GitHubError("unexpected", `GitHub refused the token request (${error}).`, {
				oauthError: error,
			});
		}
		const grant = grantSchema.safeParse(json);
		if (!grant.success)
			throw new GitHubError("unexpected", "GitHub's token endpoint answered an unknown shape.");
		const g = grant.data;
		// Times count from when we asked, so a slow answer errs towards renewing early.
		return {
			accessToken: g.access_token,
			refreshToken: g.refresh_token ?? null,
			expiresAt: g.expires_in ? asked + g.expires_in * 1000 : null,
			refreshExpiresAt: g.refresh_token_expires_in ? asked + g.refresh_token_expires_in * 1000 : null,
		};
	}

	/**
	 * A GET, conditional when GitHub gave this token an ETag for the path: a 304 answers with the kept
	 * answer, which GitHub has just confirmed. A failure never falls back on what was kept; it stays
	 * kept only to be confirmed by a later 304 (after an outage, the first check is then free too).
	 */
	async #api<S extends z.ZodType>(token: string, path: string, schema: S): Promise<z.output<S>> {
		const key = ETags.key(token, path);
		const kept = this.#etags.get(key);
		const res = await this.#send("GET", joinUrl(this.#o.apiUrl, path), path.split("?")[0]!, {
			accept: "application/vnd.github+json",
			"x-github-api-version": "2022-11-28",
			authorization: `Bearer ${token}`,
			...(kept && { "if-none-match": kept.etag }),
		});
		if (res.status === 304 && kept) {
			await res.body?.cancel();
			const again = schema.safeParse(kept.value);
			if (again.success) return again.data;
		}
		if (res.status !== 200) throw await this.#failure(res, path);
		const parsed = schema.safeParse(await readJson(res, path));
		if (!parsed.success) {
			this.#etags.delete(key);
			throw new GitHubError("unexpected", `GitHub answered ${path} with an unknown shape.`);
		}
		const etag = res.headers.get("etag");
		if (etag) this.#etags.set(key, { etag, value: parsed.data });
		else this.#etags.delete(key);
		return parsed.data;
	}

	/** One request with the User-Agent and a timeout; a network failure or timeout is `unavailable`. */
	async #send(
		method: string,
		url: string,
		path: string,
		init: Record<string, string> & { body?: string },
	): Promise<Response> {
		const { body, ...headers } = init;
		const controller = new AbortController();
		const timeoutMs = this.#o.timeoutMs ?? 10_000;
		const timer = this.#o.clock.setTimeout(() => controller.abort(), timeoutMs);
		try {
			const res = await this.#o.fetch(url, {
				method,
				headers: { ...headers, "user-agent": this.#o.userAgent },
				body,
				signal: controller.signal,
				redirect: "follow",
			});
			// Only the path: query strings and headers may carry codes or tokens.
			this.#o.log.debug("github request", { method, path, status: res.status });
			return res;
		} catch (error) {
			const timedOut = controller.signal.aborted;
			this.#o.log.warn("github request failed", { method, path, timedOut, error });
			throw new GitHubError(
				"unavailable",
				timedOut ? `GitHub did not answer within ${timeoutMs} ms.` : "GitHub could not be reached.",
				{ cause: error },
			);
		} finally {
			timer.cancel();
		}
	}

	/** Classifies a non-200 answer; the body is read only for its message. */
	async #failure(res: Response, path: string): Promise<GitHubError> {
		const status = res.status;
		const text = await res.text().catch(() => "");
		let message = "";
		try {
			message = String((JSON.parse(text) as { message?: unknown }).message ?? "");
		} catch {}
		const retryAfterMs = this.#retryAfter(res);
		const rateLimited =
			status === 429 ||
			(status === 403 &&
				(res.headers.get("x-ratelimit-remaining") === "0" ||
					res.headers.has("retry-after") ||
					/rate limit/i.test(message)));
		const details = { status, retryAfterMs };
		if (rateLimited) return new GitHubError("unavailable", `GitHub is rate limiting ${path}.`, details);
		if (status >= 500)
			return new GitHubError("unavailable", `GitHub answered ${path} with ${status}.`, details);
		if (status === 401) return new GitHubError("unauthorized", "GitHub rejected the token.", details);
		if (status === 403) return new GitHubError("forbidden", `GitHub refused ${path}.`, details);
		if (status === 404) return new GitHubError("not-found", `GitHub has nothing at ${path}.`, details);
		return new GitHubError("unexpected", `GitHub answered ${path} with ${status}.`, details);
	}

	#retryAfter(res: Response): number | undefined {
		const after = res.headers.get("retry-after");
		if (after && /^\d+$/.test(after)) return Number(after) * 1000;
		const reset = res.headers.get("x-ratelimit-reset");
		if (res.headers.get("x-ratelimit-remaining") === "0" && reset && /^\d+$/.test(reset)) {
			return Math.max(0, Number(reset) * 1000 - this.#o.clock.now());
		}
		return undefined;
	}
}

async function readJson(res: Response, path: string): Promise<unknown> {
	try {
		return await res.json();
	} catch (error) {
		throw new GitHubError("unexpected", `GitHub answered ${path} with a body that is not JSON.`, {
			cause: error,
		});
	}
}
