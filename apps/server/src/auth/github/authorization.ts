// A GitHub App user authorization: the user's token pair, renewed with the refresh grant before it expires, independent of any browser session.
import type { Clock } from "@chopin/agent-link/clock";
import type { Logger } from "../../log";
import { Secret } from "../../secret";
import { type Authorization, RENEW_BEFORE_MS } from "../authorization";
import { authorizationExpired, IdentityError } from "../errors";
import { type GitHubClient, GitHubError, type Grant } from "./client";

/** A token pair in the clear; it lives only in memory, and sealed (secret-box.ts) at rest. */
export type GitHubTokens = Grant;

export interface GitHubAuthorizationDeps {
	client: GitHubClient;
	clock: Clock;
	log: Logger;
	/** Reads the stored pair again when GitHub refuses ours (another process may have rotated it). */
	reload?: () => Promise<GitHubTokens | undefined>;
}

type Listener = () => void | Promise<void>;

/**
 * A person's GitHub authorization. `accessToken()` renews first when the token has less than
 * five minutes left; a renewal that fails for good ends the authorization (`authorization-expired`),
 * and its owner hears it through onEnded. Renewals are single-flight: GitHub rotates the refresh
 * token on every use, so two renewals at once would leave one of them holding a dead pair.
 */
export class GitHubAuthorization implements Authorization {
	readonly kind = "github";
	readonly login: string;
	readonly githubId: number | null;
	#tokens: Secret<GitHubTokens>;
	#renewing: Promise<void> | undefined;
	#ended = false;
	readonly #deps: GitHubAuthorizationDeps;
	readonly #renewed = new Set<Listener>();
	readonly #endedListeners = new Set<Listener>();

	constructor(
		deps: GitHubAuthorizationDeps,
		init: { login: string; githubId: number | null; tokens: GitHubTokens },
	) {
		this.#deps = deps;
		this.login = init.login;
		this.githubId = init.githubId;
		this.#tokens = new Secret({ ...init.tokens });
	}

	/** When the access token expires (ms since the epoch), or null when it does not. */
	get expiresAt(): number | null {
		return this.#tokens.reveal().expiresAt;
	}

	get refreshExpiresAt(): number | null {
		return this.#tokens.reveal().refreshExpiresAt;
	}

	get ended(): boolean {
		return this.#ended;
	}

	async accessToken(): Promise<string> {
		return (await this.token()).token;
	}

	/**
	 * A token that stays valid for at least `minValidityMs` when it can be renewed (default five
	 * minutes), and when it expires. A transient GitHub failure while the current token still
	 * works returns the current token; once it has expired, the failure is `unavailable`.
	 */
	async token(
		options: { minValidityMs?: number } = {},
	): Promise<{ token: string; expiresAt: number | null }> {
		this.#assertLive();
		if (this.isDue(options.minValidityMs ?? RENEW_BEFORE_MS)) {
			try {
				await this.renew();
			} catch (error) {
				if (!(error instanceof IdentityError && error.code === "unavailable") || this.#expired()) throw error;
				this.#deps.log.warn("github token renewal deferred", { login: this.login, error });
			}
		}
		this.#assertLive();
		const { accessToken, expiresAt } = this.#tokens.reveal();
		return { token: accessToken, expiresAt };
	}

	/** True when the token has at most `withinMs` left and a renewal could help. */
	isDue(withinMs = RENEW_BEFORE_MS): boolean {
		const { expiresAt } = this.#tokens.reveal();
		return expiresAt !== null && expiresAt - this.#deps.clock.now() <= withinMs;
	}

	/** Renews when due; the helper a caller with a schedule (the agent endpoint) uses. True when it renewed. */
	async renewIfDue(withinMs = RENEW_BEFORE_MS): Promise<boolean> {
		this.#assertLive();
		if (!this.isDue(withinMs)) return false;
		await this.renew();
		return true;
	}

	/** Renews now (joining a renewal already under way). */
	renew(): Promise<void> {
		this.#assertLive();
		this.#renewing ??= this.#renew().finally(() => {
			this.#renewing = undefined;
		});
		return this.#renewing;
	}

	/**
	 * GitHub answered 401 to a call made with `tokenUsed`. Renews once (the token may have been
	 * revoked while its refresh token still works); the caller then tries again. Throws
	 * `authorization-expired` when nothing can be renewed.
	 */
	async rejected(tokenUsed: string): Promise<void> {
		this.#assertLive();
		if (this.#tokens.reveal().accessToken !== tokenUsed) return;
		if (this.#renewing) return this.#renewing;
		if (!this.#tokens.reveal().refreshToken) {
			this.end();
			throw authorizationExpired(this.login);
		}
		await this.renew();
	}

	/** Ends the authorization for good; onEnded listeners hear it once. */
	end(): void {
		if (this.#ended) return;
		this.#ended = true;
		for (const fn of this.#endedListeners) this.#notify(fn, "ended");
	}

	onRenewed(fn: Listener): () => void {
		this.#renewed.add(fn);
		return () => this.#renewed.delete(fn);
	}

	onEnded(fn: Listener): () => void {
		this.#endedListeners.add(fn);
		return () => this.#endedListeners.delete(fn);
	}

	/** The pair in the clear, only to seal it for storage. */
	tokensForSealing(): GitHubTokens {
		return { ...this.#tokens.reveal() };
	}

	async #renew(): Promise<void> {
		const current = this.#tokens.reveal();
		const now = this.#deps.clock.now();
		if (!current.refreshToken || (current.refreshExpiresAt !== null && current.refreshExpiresAt <= now)) {
			// Nothing renews a token without a live refresh token: fine until the token itself expires.
			if (!this.#expired()) return;
			this.end();
			throw authorizationExpired(this.login);
		}
		let grant: Grant;
		try {
			grant = await this.#deps.client.refresh(current.refreshToken);
		} catch (error) {
			if (!(error instanceof GitHubError)) throw error;
			if (error.kind === "unavailable") {
				throw new IdentityError(
					"unavailable",
					"GitHub is unavailable, so the GitHub token could not be renewed.",
					"Try again in a minute.",
					error.details.retryAfterMs,
					{ cause: error },
				);
			}
			if (error.kind === "unauthorized" && (await this.#adoptReloaded(current.refreshToken))) return;
			if (error.kind === "unauthorized") {
				this.#deps.log.info("github authorization ended", {
					login: this.login,
					reason: error.details.oauthError,
				});
				this.end();
				throw authorizationExpired(this.login);
			}
			throw error;
		}
		// GitHub omits a new refresh token when the app does not rotate them: keep the one we have.
		this.#tokens = new Secret({
			...grant,
			refreshToken: grant.refreshToken ?? current.refreshToken,
			refreshExpiresAt: grant.refreshToken ? grant.refreshExpiresAt : current.refreshExpiresAt,
		});
		this.#deps.log.info("github token renewed", { login: this.login, expiresAt: grant.expiresAt });
		await Promise.all([...this.#renewed].map((fn) => this.#notify(fn, "renewed")));
	}

	/** True when the stored pair has moved on from `refused` (another process renewed it), now adopted. */
	async #adoptReloaded(refused: string): Promise<boolean> {
		const stored = await this.#deps.reload?.().catch((error: unknown) => {
			this.#deps.log.warn("reloading a stored github authorization failed", { login: this.login, error });
			return undefined;
		});
		if (!stored?.refreshToken || stored.refreshToken === refused) return false;
		this.#tokens = new Secret({ ...stored });
		return true;
	}

	#expired(): boolean {
		const { expiresAt } = this.#tokens.reveal();
		return expiresAt !== null && expiresAt <= this.#deps.clock.now();
	}

	#assertLive(): void {
		if (this.#ended) throw authorizationExpired(this.login);
	}

	async #notify(fn: Listener, event: string): Promise<void> {
		try {
			await fn();
		} catch (error) {
			this.#deps.log.error("github authorization listener failed", { login: this.login, event, error });
		}
	}
}

/** A token a client presented as its bearer: it acts as long as GitHub accepts it, and is never renewed. */
export class GitHubBearer implements Authorization {
	readonly kind = "github";
	readonly #token: Secret;

	constructor(
		readonly login: string,
		token: string,
		/** SHA-256 of the token, hex: what caches key on instead of the token. */
		readonly digest: string,
	) {
		this.#token = new Secret(token);
	}

	async accessToken(): Promise<string> {
		return this.#token.reveal();
	}
}
