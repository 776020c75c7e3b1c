// The Identity interface (sign-in, bearers, permissions, admission, storable authorizations) and the AUTH_MODE switch between its two implementations.
import type { Clock } from "@chopin/agent-link/clock";
import type { Config } from "../config";
import type { Logger } from "../log";
import type { Secret } from "../secret";
import type {
	Account,
	Authorization,
	RepoPermission,
	RestoreOptions,
	StoredAuthorization,
} from "./authorization";
import type { GitHubAuthorization } from "./github/authorization";
import type { GitHubClient } from "./github/client";
import { createGitHubIdentity } from "./github/identity";
import { createLocalIdentity } from "./local";
import { SecretBox } from "./secret-box";

/** A verified bearer: who it is, and an Authorization that acts with that very bearer. */
export interface BearerAccount {
	account: Account;
	authorization: Authorization;
}

/** A fresh sign-in: the person, and the authorization their session will hold. */
export interface SignedIn {
	account: Account;
	authorization: Authorization;
}

/** How current an answer must be. */
export interface CheckOptions {
	/**
	 * Ask GitHub now instead of taking an answer kept for seconds: for the checks that decide
	 * whether a Planner may start or go on, where a kept answer would hide a change. The request
	 * is conditional (If-None-Match), so an unchanged answer is a 304 that spends no rate limit.
	 * Local mode reads LOCAL_ACCOUNTS every time anyway.
	 */
	fresh?: boolean;
}

interface IdentityBase {
	readonly mode: "github" | "local";
	/**
	 * The account's access to `owner/name`. GitHub: GET /repos/{owner}/{repo} with the
	 * authorization's own token (admin or maintain → admin, push → write, pull → read; 404 or a
	 * 403 that is not a rate limit → none), kept 30 s per account and repository unless `fresh`.
	 * Throws `unavailable` when GitHub fails and `authorization-expired` when the token is dead for good.
	 */
	permission(
		authorization: Authorization,
		repository: string,
		options?: CheckOptions,
	): Promise<RepoPermission>;
	/** ADMIT: listed logins, members of listed organizations (kept 60 s unless `fresh`); an empty list admits everyone. */
	admitted(authorization: Authorization, options?: CheckOptions): Promise<boolean>;
	/**
	 * Checks a bearer for the agent connection. Throws IdentityError `unauthorized` (missing,
	 * malformed or rejected: HTTP 401) or `unavailable` (GitHub failing or rate limiting: 503);
	 * anything else is a 500.
	 */
	verifyBearer(token: string): Promise<BearerAccount>;
	/** The storable form of an authorization, its tokens sealed for `binding` (e.g. `machine:<id>`). */
	store(authorization: Authorization, binding: string): Promise<StoredAuthorization>;
	/** Back from store(); throws `authorization-expired` when it cannot be opened or no longer applies. */
	restore(stored: StoredAuthorization, binding: string, options?: RestoreOptions): Promise<Authorization>;
	/** Drops cached answers about a login (permissions, admission). */
	forget(login: string): void;
}

/**
 * What the OAuth callback does with a fresh grant started with `/auth/github/start?intent=<name>`,
 * in place of making a browser session. A paired machine needs a token pair of its own: GitHub
 * rotates the refresh token on every renewal, so a pair copied from a session would die the
 * first time either holder renewed it.
 */
export type GrantHandler = (grant: {
	account: Account;
	authorization: GitHubAuthorization;
	req: Request;
	/** The same-origin path the sign-in was started with. */
	next: string;
}) => Promise<Response>;

export interface GitHubIdentity extends IdentityBase {
	readonly mode: "github";
	readonly client: GitHubClient;
	/** Intent name → handler; register at start-up (e.g. machine pairing). */
	readonly grantHandlers: Map<string, GrantHandler>;
	/** Trades an OAuth code for the person's account and a renewable authorization. */
	signIn(code: string, redirectUri: string): Promise<SignedIn & { authorization: GitHubAuthorization }>;
}

export interface LocalIdentity extends IdentityBase {
	readonly mode: "local";
	/** Checks a local account's login (and password, when it has one). Throws `unauthorized`. */
	signIn(login: string, password: string | undefined): Promise<SignedIn>;
}

export type Identity = GitHubIdentity | LocalIdentity;

export interface IdentityDeps {
	config: Config;
	clock: Clock;
	log: Logger;
	fetch: typeof fetch;
	secretKey: Secret<Uint8Array>;
	version: string;
}

/** The implementation AUTH_MODE names. */
export function createIdentity(deps: IdentityDeps): Identity {
	const box = new SecretBox(deps.secretKey.reveal());
	return deps.config.authMode === "github"
		? createGitHubIdentity({ ...deps, box })
		: createLocalIdentity({ config: deps.config, log: deps.log });
}
