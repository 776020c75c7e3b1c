// Identity under AUTH_MODE=github: OAuth sign-in, bearers checked with GET /user, permissions from GET /repos, admission by login or organization.
import type { Clock } from "@chopin/agent-link/clock";
import type { Config } from "../../config";
import type { Logger } from "../../log";
import type { Account, Authorization, RepoPermission, StoredAuthorization } from "../authorization";
import { authorizationExpired, IdentityError, unauthorized } from "../errors";
import type { GitHubIdentity } from "../identity";
import { type SecretBox, SecretBoxError } from "../secret-box";
import { sha256Hex } from "../tokens";
import { TtlCache } from "../ttl-cache";
import { GitHubAuthorization, GitHubBearer, type GitHubTokens } from "./authorization";
import { GitHubClient, GitHubError, type GitHubRepository, type GitHubUser } from "./client";

export interface GitHubIdentityDeps {
	config: Config;
	clock: Clock;
	log: Logger;
	fetch: typeof fetch;
	box: SecretBox;
	version: string;
}

/**
 * How long answers are kept for pages and API guards: permissions 30 s, a bearer's account and
 * admission 60 s. A `fresh` check (before every Planner start and turn) never reads them; it asks
 * GitHub with a conditional request and refreshes them with what GitHub said.
 */
export const PERMISSION_TTL_MS = 30_000;
export const BEARER_TTL_MS = 60_000;
export const ADMISSION_TTL_MS = 60_000;

export function createGitHubIdentity(deps: GitHubIdentityDeps): GitHubIdentity {
	const { config, clock, box } = deps;
	const log = deps.log.child({ component: "github-identity" });
	const client = new GitHubClient({
		webUrl: config.github.url,
		apiUrl: config.github.apiUrl,
		clientId: config.github.clientId,
		clientSecret: config.github.clientSecret,
		fetch: deps.fetch,
		clock,
		log,
		userAgent: `Chopin/${deps.version}`,
	});
	const permissions = new TtlCache<RepoPermission>(PERMISSION_TTL_MS, clock);
	const bearers = new TtlCache<Account>(BEARER_TTL_MS, clock);
	const admissions = new TtlCache<boolean>(ADMISSION_TTL_MS, clock);
	const authorizationDeps = { client, clock, log };

	/** Runs a call with the authorization's token; a 401 renews once and tries again. */
	async function withToken<T>(authorization: Authorization, call: (token: string) => Promise<T>): Promise<T> {
		const token = await githubAuthorization(authorization).accessToken();
		try {
			return await call(token);
		} catch (error) {
			if (!(error instanceof GitHubError) || error.kind !== "unauthorized") throw unavailableOr(error);
			if (!(authorization instanceof GitHubAuthorization)) {
				throw unauthorized("GitHub rejected the token.", "Use a current GitHub token.");
			}
			await authorization.rejected(token);
			const again = await authorization.accessToken();
			try {
				return await call(again);
			} catch (retryError) {
				if (retryError instanceof GitHubError && retryError.kind === "unauthorized") {
					authorization.end();
					throw authorizationExpired(authorization.login);
				}
				throw unavailableOr(retryError);
			}
		}
	}

	async function seal(tokens: GitHubTokens, binding: string) {
		return {
			accessToken: await box.seal(tokens.accessToken, `${binding}:github-access`),
			refreshToken: tokens.refreshToken
				? await box.seal(tokens.refreshToken, `${binding}:github-refresh`)
				: null,
		};
	}

	async function open(
		stored: StoredAuthorization & { kind: "github" },
		binding: string,
	): Promise<GitHubTokens> {
		return {
			accessToken: await box.open(stored.accessToken, `${binding}:github-access`),
			refreshToken: stored.refreshToken
				? await box.open(stored.refreshToken, `${binding}:github-refresh`)
				: null,
			expiresAt: stored.expiresAt,
			refreshExpiresAt: stored.refreshExpiresAt,
		};
	}

	const identity: GitHubIdentity = {
		mode: "github",
		client,
		grantHandlers: new Map(),

		async signIn(code, redirectUri) {
			let tokens: GitHubTokens;
			try {
				tokens = await client.exchangeCode(code, redirectUri);
			} catch (error) {
				if (error instanceof GitHubError && error.kind === "unauthorized") {
					throw unauthorized(
						"GitHub did not accept the sign-in code; it may have expired.",
						"Sign in again.",
					);
				}
				throw unavailableOr(error);
			}
			let user: GitHubUser;
			try {
				user = await client.user(tokens.accessToken);
			} catch (error) {
				throw unavailableOr(error);
			}
			const authorization = new GitHubAuthorization(authorizationDeps, {
				login: user.login,
				githubId: user.id,
				tokens,
			});
			return { account: toAccount(user), authorization };
		},

		async permission(authorization, repository, options = {}) {
			const key = `${scope(authorization)}\n${repository.toLowerCase()}`;
			const cached = options.fresh ? undefined : permissions.get(key);
			if (cached) return cached;
			let permission: RepoPermission;
			try {
				permission = fromGitHub(await withToken(authorization, (t) => client.repository(t, repository)));
			} catch (error) {
				// GitHub answers 404 for what the caller cannot see; a 403 here (SSO, an app without access) is no access either.
				if (!(error instanceof GitHubError && (error.kind === "not-found" || error.kind === "forbidden")))
					throw error;
				permission = "none";
			}
			permissions.set(key, permission);
			return permission;
		},

		async admitted(authorization, options = {}) {
			const { logins, organizations } = config.admit;
			if (logins.length === 0 && organizations.length === 0) return true;
			if (logins.includes(authorization.login.toLowerCase())) return true;
			if (organizations.length === 0) return false;
			const key = scope(authorization);
			const cached = options.fresh ? undefined : admissions.get(key);
			if (cached !== undefined) return cached;
			let orgs: string[];
			try {
				orgs = await withToken(authorization, (t) => client.organizations(t));
			} catch (error) {
				if (!(error instanceof GitHubError && (error.kind === "not-found" || error.kind === "forbidden")))
					throw error;
				orgs = [];
			}
			const admitted = orgs.some((org) => organizations.includes(org.toLowerCase()));
			admissions.set(key, admitted);
			return admitted;
		},

		async verifyBearer(token) {
			if (!/^[\x21-\x7e]{1,2048}$/.test(token)) {
				throw unauthorized(
					"The bearer token is malformed.",
					"Send a GitHub token as Authorization: Bearer <token>.",
				);
			}
			// Keyed by the token's digest: the cache never holds a token.
			const digest = sha256Hex(token);
			let account = bearers.get(digest);
			if (!account) {
				try {
					account = toAccount(await client.user(token));
				} catch (error) {
					if (error instanceof GitHubError && (error.kind === "unauthorized" || error.kind === "forbidden")) {
						throw unauthorized("GitHub rejected the bearer token.", "Use a current GitHub token.");
					}
					throw unavailableOr(error);
				}
				bearers.set(digest, account);
			}
			return { account, authorization: new GitHubBearer(account.login, token, digest) };
		},

		async store(authorization, binding) {
			if (!(authorization instanceof GitHubAuthorization)) {
				throw new Error("Only a GitHub user authorization from a sign-in can be stored.");
			}
			const tokens = authorization.tokensForSealing();
			return {
				kind: "github",
				login: authorization.login,
				githubId: authorization.githubId,
				...(await seal(tokens, binding)),
				expiresAt: tokens.expiresAt,
				refreshExpiresAt: tokens.refreshExpiresAt,
			};
		},

		async restore(stored, binding, options = {}) {
			if (stored.kind !== "github") {
				log.warn("a stored local authorization cannot act under AUTH_MODE=github", { login: stored.login });
				throw authorizationExpired(stored.login);
			}
			let tokens: GitHubTokens;
			try {
				tokens = await open(stored, binding);
			} catch (error) {
				if (!(error instanceof SecretBoxError)) throw error;
				log.warn("a stored github authorization cannot be decrypted (was the secret key changed?)", {
					login: stored.login,
				});
				throw authorizationExpired(stored.login);
			}
			const reload = options.reload;
			const authorization = new GitHubAuthorization(
				{
					...authorizationDeps,
					reload: reload
						? async () => {
								const fresh = await reload();
								return fresh?.kind === "github" ? open(fresh, binding) : undefined;
							}
						: undefined,
				},
				{ login: stored.login, githubId: stored.githubId, tokens },
			);
			if (options.onRenewed) {
				const onRenewed = options.onRenewed;
				authorization.onRenewed(async () => onRenewed(await identity.store(authorization, binding)));
			}
			if (options.onEnded) authorization.onEnded(options.onEnded);
			return authorization;
		},

		forget(login) {
			const prefix = `user:${login.toLowerCase()}`;
			permissions.deletePrefix(`${prefix}\n`);
			admissions.delete(prefix);
		},
	};
	return identity;
}

function githubAuthorization(authorization: Authorization): GitHubAuthorization | GitHubBearer {
	if (authorization instanceof GitHubAuthorization || authorization instanceof GitHubBearer)
		return authorization;
	throw new Error(`A ${authorization.kind} authorization cannot act under AUTH_MODE=github.`);
}

/** Whose answers a cache entry holds: a user's (any of their app tokens) or one bearer's (a PAT may see less). */
function scope(authorization: Authorization): string {
	const a = githubAuthorization(authorization);
	return a instanceof GitHubBearer ? `bearer:${a.digest}` : `user:${a.login.toLowerCase()}`;
}

function fromGitHub(repo: GitHubRepository): RepoPermission {
	const p = repo.permissions;
	if (!p) return "none";
	if (p.admin || p.maintain) return "admin";
	if (p.push) return "write";
	if (p.pull) return "read";
	return "none";
}

function toAccount(user: GitHubUser): Account {
	return {
		login: user.login,
		kind: "github",
		name: user.name ?? null,
		avatarUrl: user.avatar_url ?? null,
		githubId: user.id,
	};
}

/** GitHub's `unavailable` as IdentityError `unavailable`; anything else passes through unchanged. */
function unavailableOr(error: unknown): unknown {
	if (error instanceof GitHubError && error.kind === "unavailable") {
		return new IdentityError(
			"unavailable",
			"GitHub is unavailable or rate limiting Chopin.",
			"Try again in a minute.",
			error.details.retryAfterMs,
			{ cause: error },
		);
	}
	return error;
}
