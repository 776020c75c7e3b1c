// Browser sessions: the chopin_session cookie, only its digest stored, GitHub tokens sealed on the row, and the live sign-in events the agent endpoint follows.
import type { Clock } from "@chopin/agent-link/clock";
import { z } from "zod";
import type { Logger } from "../log";
import type { Store } from "../store/store";
import type { Account, Authorization, StoredAuthorization } from "./authorization";
import { isIdentityError } from "./errors";
import { GitHubAuthorization } from "./github/authorization";
import type { Identity } from "./identity";
import { type LiveSignIn, LiveSignIns } from "./live-sign-ins";
import { randomToken, sha256Hex } from "./tokens";
import { upsertUser } from "./users";

export const SESSION_COOKIE = "chopin_session";
/** 32 bytes as base64url. */
const COOKIE_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** last_seen_at is written at most this often per session. */
const TOUCH_EVERY_MS = 5 * 60_000;

const bytes = z.custom<Uint8Array>((v) => v instanceof Uint8Array);

const sessionRowSchema = z.object({
	id_digest: z.string(),
	login: z.string(),
	expires_at: z.number(),
	last_seen_at: z.number(),
	github_access_enc: bytes.nullable(),
	github_refresh_enc: bytes.nullable(),
	github_expires_at: z.number().nullable(),
	github_refresh_expires_at: z.number().nullable(),
	github_id: z.number().nullable(),
	name: z.string().nullable(),
	avatar_url: z.string().nullable(),
});
type SessionRow = z.infer<typeof sessionRowSchema>;

/** Why a session ended: its person signed out, it reached its expiry, or its GitHub authorization died. */
export type SessionEndReason = "sign-out" | "expired" | "revoked";

export interface SessionsDeps {
	store: Store;
	clock: Clock;
	log: Logger;
	identity: Identity;
	/** SESSION_TTL_MS: how long a session lasts from sign-in. */
	ttlMs: number;
}

type Listeners<F> = Set<F>;

export class Sessions {
	readonly #deps: SessionsDeps;
	readonly #live: LiveSignIns;
	readonly #resolving = new Map<string, Promise<LiveSignIn | null>>();
	readonly #touched = new Map<string, number>();
	/** Sessions being ended: a request meanwhile must not find the row and make it live again. */
	readonly #ending = new Set<string>();
	/** Ends started by timers and authorization events, awaited by settled() and close(). */
	readonly #pending = new Set<Promise<unknown>>();
	readonly #onSignIn: Listeners<(signIn: LiveSignIn) => void> = new Set();
	readonly #onSignOut: Listeners<(login: string, sessionId: string) => void> = new Set();
	readonly #onExpired: Listeners<(login: string, sessionId: string, reason: SessionEndReason) => void> =
		new Set();

	constructor(deps: SessionsDeps) {
		this.#deps = deps;
		this.#live = new LiveSignIns(deps.clock, (entry) =>
			this.#background(this.end(entry.sessionId, "expired")),
		);
	}

	/** Makes a session for a fresh sign-in; returns the cookie value (shown once, stored only as its digest). */
	async create(
		account: Account,
		authorization: Authorization,
	): Promise<{ cookie: string; signIn: LiveSignIn }> {
		const { store, clock, identity } = this.#deps;
		const now = clock.now();
		await upsertUser(store, account, now);
		const cookie = randomToken();
		const id = sha256Hex(cookie);
		const sealed =
			authorization.kind === "github" ? await identity.store(authorization, binding(id)) : undefined;
		const github = sealed?.kind === "github" ? sealed : undefined;
		const expiresAt = now + this.#deps.ttlMs;
		await store.sql`INSERT INTO browser_sessions ${store.sql({
			id_digest: id,
			login: account.login,
			created_at: now,
			expires_at: expiresAt,
			last_seen_at: now,
			github_access_enc: github?.accessToken ?? null,
			github_refresh_enc: github?.refreshToken ?? null,
			github_expires_at: github?.expiresAt ?? null,
			github_refresh_expires_at: github?.refreshExpiresAt ?? null,
		})}`;
		this.#touched.set(id, now);
		const signIn = this.#goLive(id, account.login, authorization, expiresAt, account);
		this.#deps.log.info("signed in", { login: account.login, kind: account.kind });
		for (const fn of this.#onSignIn) this.#call(() => fn(signIn));
		return { cookie, signIn };
	}

	/**
	 * The live sign-in a cookie names, or null when it names none (unknown, expired, signed out
	 * elsewhere, or its authorization can no longer be opened). Presenting a cookie makes its
	 * session live on this process.
	 */
	resolve(cookie: string): Promise<LiveSignIn | null> {
		if (!COOKIE_PATTERN.test(cookie)) return Promise.resolve(null);
		const id = sha256Hex(cookie);
		// One lookup per session at a time, so concurrent requests share one restored authorization.
		let pending = this.#resolving.get(id);
		if (!pending) {
			pending = this.#resolve(id).finally(() => this.#resolving.delete(id));
			this.#resolving.set(id, pending);
		}
		return pending;
	}

	/** Ends the cookie's session; true when there was one. */
	async signOut(cookie: string): Promise<boolean> {
		if (!COOKIE_PATTERN.test(cookie)) return false;
		return this.end(sha256Hex(cookie), "sign-out");
	}

	/** Deletes the session and drops it from the live registry; listeners hear it once. */
	async end(sessionId: string, reason: SessionEndReason): Promise<boolean> {
		const entry = this.#live.remove(sessionId);
		this.#touched.delete(sessionId);
		this.#ending.add(sessionId);
		// A live session's listeners hear it at once, before the row is gone: the agent endpoint
		// releases what rested on it without waiting for the database.
		if (entry) this.#ended(entry.login, sessionId, reason, entry);
		try {
			const rows = await this.#deps.store.many(
				this.#deps.store.sql`DELETE FROM browser_sessions WHERE id_digest = ${sessionId} RETURNING login`,
			);
			const login = rows[0]?.login as string | undefined;
			if (!entry && login) this.#ended(login, sessionId, reason);
			return Boolean(entry || login);
		} finally {
			this.#ending.delete(sessionId);
		}
	}

	#ended(login: string, sessionId: string, reason: SessionEndReason, entry?: LiveSignIn): void {
		if (entry?.authorization instanceof GitHubAuthorization) entry.authorization.end();
		this.#deps.log.info("session ended", { login, reason });
		if (reason === "sign-out") for (const fn of this.#onSignOut) this.#call(() => fn(login, sessionId));
		else for (const fn of this.#onExpired) this.#call(() => fn(login, sessionId, reason));
	}

	/**
	 * The account's live browser sign-in on this process since it started (the newest when there
	 * are several), or null: what the agent endpoint's sign-in-required rests on.
	 */
	liveSignIn(login: string): { sessionId: string; authorization: Authorization } | null {
		const entry = this.#live.latest(login);
		if (!entry || entry.expiresAt <= this.#deps.clock.now()) return null;
		return { sessionId: entry.sessionId, authorization: entry.authorization };
	}

	/** The live sign-in with this id, or undefined. */
	live(sessionId: string): LiveSignIn | undefined {
		return this.#live.get(sessionId);
	}

	/** A sign-in went live on this process: a new one, or a cookie restoring one (after a restart). */
	onSignIn(fn: (signIn: LiveSignIn) => void): () => void {
		this.#onSignIn.add(fn);
		return () => this.#onSignIn.delete(fn);
	}

	/** A person signed out (listeners get the login and the session id that ended). */
	onSignOut(fn: (login: string, sessionId: string) => void): () => void {
		this.#onSignOut.add(fn);
		return () => this.#onSignOut.delete(fn);
	}

	/** A session ended without a sign-out: it expired, or its GitHub authorization was revoked. */
	onSessionExpired(fn: (login: string, sessionId: string, reason: SessionEndReason) => void): () => void {
		this.#onExpired.add(fn);
		return () => this.#onExpired.delete(fn);
	}

	/** Deletes the rows of sessions that have expired (they are also refused whenever presented). */
	async sweep(): Promise<number> {
		const now = this.#deps.clock.now();
		const rows = await this.#deps.store.many(
			this.#deps.store.sql`DELETE FROM browser_sessions WHERE expires_at <= ${now} RETURNING id_digest`,
		);
		return rows.length;
	}

	/** Resolves once the ends that timers and authorization events started have reached the store. */
	async settled(): Promise<void> {
		while (this.#pending.size) await Promise.allSettled([...this.#pending]);
	}

	/** Stops the expiry timers and waits for ends under way (the server is stopping; the store closes next). */
	async close(): Promise<void> {
		this.#live.clear();
		await this.settled();
	}

	#background(work: Promise<unknown>): void {
		const tracked = work
			.catch((error: unknown) => this.#deps.log.error("ending a session failed", { error }))
			.finally(() => this.#pending.delete(tracked));
		this.#pending.add(tracked);
	}

	async #resolve(id: string): Promise<LiveSignIn | null> {
		const { clock } = this.#deps;
		if (this.#ending.has(id)) return null;
		const row = await this.#row(id);
		const live = this.#live.get(id);
		if (!row) {
			// Signed out on another process (or never existed): forget it here too.
			if (live) await this.end(id, "sign-out");
			return null;
		}
		const now = clock.now();
		if (row.expires_at <= now) {
			await this.end(id, "expired");
			return null;
		}
		await this.#touch(id, now);
		if (live) {
			live.seenAt = now;
			return live;
		}
		let authorization: Authorization;
		try {
			authorization = await this.#deps.identity.restore(this.#stored(row), binding(id), {
				// Another process may have renewed this session's pair a moment ago: its row has the pair that works.
				reload: async () => {
					const fresh = await this.#row(id);
					return fresh ? this.#stored(fresh) : undefined;
				},
			});
		} catch (error) {
			if (!isIdentityError(error, "authorization-expired")) throw error;
			await this.end(id, "revoked");
			return null;
		}
		// Ended while this request restored it: it stays ended.
		if (this.#ending.has(id)) return null;
		// Another request may have made it live while this one restored: keep the first.
		const already = this.#live.get(id);
		if (already) return already;
		const signIn = this.#goLive(id, row.login, authorization, row.expires_at, row);
		// Live on this process again (after a restart): what waits for the owner's sign-in hears it.
		for (const fn of this.#onSignIn) this.#call(() => fn(signIn));
		return signIn;
	}

	#row(id: string): Promise<SessionRow | undefined> {
		const { store } = this.#deps;
		return store.one(
			store.sql`
				SELECT s.id_digest, s.login, s.expires_at, s.last_seen_at, s.github_access_enc, s.github_refresh_enc,
					s.github_expires_at, s.github_refresh_expires_at, u.github_id, u.name, u.avatar_url
				FROM browser_sessions s JOIN users u ON u.login = s.login
				WHERE s.id_digest = ${id}`,
			sessionRowSchema,
		);
	}

	#stored(row: SessionRow): StoredAuthorization {
		if (this.#deps.identity.mode === "local" || !row.github_access_enc)
			return { kind: "local", login: row.login };
		return {
			kind: "github",
			login: row.login,
			githubId: row.github_id,
			accessToken: row.github_access_enc,
			refreshToken: row.github_refresh_enc,
			expiresAt: row.github_expires_at,
			refreshExpiresAt: row.github_refresh_expires_at,
		};
	}

	#goLive(
		id: string,
		login: string,
		authorization: Authorization,
		expiresAt: number,
		profile: { name: string | null; avatarUrl?: string | null; avatar_url?: string | null },
	): LiveSignIn {
		if (authorization instanceof GitHubAuthorization) {
			authorization.onRenewed(() => this.#persistRenewal(id, authorization));
			authorization.onEnded(() => this.#background(this.end(id, "revoked")));
		}
		return this.#live.add({
			sessionId: id,
			login,
			authorization,
			expiresAt,
			seenAt: this.#deps.clock.now(),
			name: profile.name,
			avatarUrl: profile.avatarUrl ?? profile.avatar_url ?? null,
		});
	}

	async #persistRenewal(id: string, authorization: GitHubAuthorization): Promise<void> {
		const { store, identity } = this.#deps;
		const sealed = await identity.store(authorization, binding(id));
		if (sealed.kind !== "github") return;
		await store.sql`
			UPDATE browser_sessions SET github_access_enc = ${sealed.accessToken}, github_refresh_enc = ${sealed.refreshToken},
				github_expires_at = ${sealed.expiresAt}, github_refresh_expires_at = ${sealed.refreshExpiresAt}
			WHERE id_digest = ${id}`;
	}

	async #touch(id: string, now: number): Promise<void> {
		const last = this.#touched.get(id);
		if (last !== undefined && now - last < TOUCH_EVERY_MS) return;
		this.#touched.set(id, now);
		await this.#deps.store.sql`UPDATE browser_sessions SET last_seen_at = ${now} WHERE id_digest = ${id}`;
	}

	#call(fn: () => void): void {
		try {
			fn();
		} catch (error) {
			this.#deps.log.error("a sign-in listener failed", { error });
		}
	}
}

/** What a session's sealed tokens are bound to: they open for this row only. */
function binding(sessionId: string): string {
	return `browser_sessions:${sessionId}`;
}
