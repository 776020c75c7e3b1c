// OAuth codes, user access tokens and refresh tokens of the emulated GitHub, with GitHub App
// lifetimes (code 10 min, ghu_ 8 h, ghr_ about 6 months) measured on the injected clock.
import type { Clock } from "../../../../packages/agent-link/src/clock";
import { EmulatorError } from "./github-emulator-errors";

export const CODE_TTL_MS = 10 * 60_000;
/** Seconds; GitHub always answers 28800 for an expiring GitHub App user token. */
export const ACCESS_TOKEN_TTL_S = 28_800;
/**
 * Seconds. GitHub's docs print 15811200 (183 days) but live answers vary around six months
 * (15897600 is 184 days); a client must read the field, never assume it.
 */
export const REFRESH_TOKEN_TTL_S = 15_897_600;

interface Code {
	login: string;
	clientId: string;
	redirectUri: string;
	expiresAt: number;
}

interface AccessToken {
	login: string;
	/** The app it was issued to; null for a pre-issued token (a PAT in the fixture). */
	clientId: string | null;
	expiresAt: number | null;
	refreshToken: string | null;
}

interface RefreshToken {
	login: string;
	clientId: string;
	expiresAt: number;
	accessToken: string;
}

export interface Grant {
	login: string;
	accessToken: string;
	expiresIn: number;
	refreshToken: string;
	refreshTokenExpiresIn: number;
}

export type GrantError = "bad_verification_code" | "redirect_uri_mismatch" | "bad_refresh_token";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Random base62 text; bytes of 248 and above are skipped so every character is equally likely. */
function base62(length: number): string {
	let out = "";
	while (out.length < length) {
		for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
			if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
		}
	}
	return out;
}

/** Token shapes as GitHub issues them, so the redaction patterns meet the real thing. */
export const newAccessToken = () => `ghu_${base62(36)}`;
export const newRefreshToken = () => `ghr_${base62(76)}`;
const newCode = () => Buffer.from(crypto.getRandomValues(new Uint8Array(10))).toString("hex");

export class TokenStore {
	readonly #codes = new Map<string, Code>();
	readonly #access = new Map<string, AccessToken>();
	readonly #refresh = new Map<string, RefreshToken>();

	constructor(readonly clock: Clock) {}

	/** A token issued outside the OAuth flow (a PAT, or a user token a test wants without a browser). */
	add(login: string, token = newAccessToken(), expiresAt: number | null = null): string {
		this.#access.set(token, { login, clientId: null, expiresAt, refreshToken: null });
		return token;
	}

	issueCode(clientId: string, login: string, redirectUri: string): string {
		const code = newCode();
		this.#codes.set(code, { login, clientId, redirectUri, expiresAt: this.clock.now() + CODE_TTL_MS });
		return code;
	}

	/** Trades a code for a token pair. A code works once, for the app it was issued to, for 10 minutes. */
	exchangeCode(clientId: string, code: string, redirectUri: string | undefined): Grant | GrantError {
		const entry = this.#codes.get(code);
		if (!entry || entry.clientId !== clientId || this.clock.now() >= entry.expiresAt)
			return "bad_verification_code";
		if (redirectUri !== undefined && redirectUri !== entry.redirectUri) return "redirect_uri_mismatch";
		this.#codes.delete(code);
		return this.#grant(entry.login, clientId);
	}

	/** Rotates a pair: the refresh token used and the access token issued with it stop working. */
	refresh(clientId: string, refreshToken: string): Grant | GrantError {
		const entry = this.#refresh.get(refreshToken);
		if (!entry || entry.clientId !== clientId || this.clock.now() >= entry.expiresAt)
			return "bad_refresh_token";
		this.#refresh.delete(refreshToken);
		this.#access.delete(entry.accessToken);
		return this.#grant(entry.login, clientId);
	}

	/** The login a token acts for, or undefined when it is unknown, revoked or expired. */
	resolve(token: string): string | undefined {
		const entry = this.#access.get(token);
		if (!entry) return undefined;
		if (entry.expiresAt !== null && this.clock.now() >= entry.expiresAt) return undefined;
		return entry.login;
	}

	/** Revokes one access or refresh token. */
	revoke(token: string): void {
		if (!this.#access.delete(token) && !this.#refresh.delete(token)) throw unknownToken();
	}

	/** Makes an access or refresh token expire now, as if its lifetime had run out. */
	expire(token: string): void {
		const entry = this.#access.get(token) ?? this.#refresh.get(token);
		if (!entry) throw unknownToken();
		entry.expiresAt = this.clock.now();
	}

	/**
	 * The user revoked one app's authorization: its codes and token pairs stop working. Without a
	 * client id every token of the user goes, pre-issued ones too (the account was locked out).
	 */
	revokeAuthorization(login: string, clientId?: string): void {
		const hit = (e: { login: string; clientId: string | null }) =>
			e.login.toLowerCase() === login.toLowerCase() && (clientId === undefined || e.clientId === clientId);
		const maps: Map<string, { login: string; clientId: string | null }>[] = [
			this.#codes,
			this.#access,
			this.#refresh,
		];
		for (const map of maps) for (const [key, entry] of map) if (hit(entry)) map.delete(key);
	}

	#grant(login: string, clientId: string): Grant {
		const now = this.clock.now();
		const accessToken = newAccessToken();
		const refreshToken = newRefreshToken();
		this.#access.set(accessToken, {
			login,
			clientId,
			expiresAt: now + ACCESS_TOKEN_TTL_S * 1000,
			refreshToken,
		});
		this.#refresh.set(refreshToken, {
			login,
			clientId,
			expiresAt: now + REFRESH_TOKEN_TTL_S * 1000,
			accessToken,
		});
		return {
			login,
			accessToken,
			expiresIn: ACCESS_TOKEN_TTL_S,
			refreshToken,
			refreshTokenExpiresIn: REFRESH_TOKEN_TTL_S,
		};
	}
}

function unknownToken(): EmulatorError {
	return new EmulatorError(
		"unknown-token",
		"The emulator never issued that token, or it was already revoked or rotated.",
		"Pass a token from the fixture, from addToken, or from the token endpoint's latest answer.",
	);
}
