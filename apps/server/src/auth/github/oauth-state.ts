// The OAuth `state` of a GitHub sign-in: random, bound to the browser by a short-lived sealed cookie, checked in constant time, good once.
import type { Clock } from "@chopin/agent-link/clock";
import { z } from "zod";
import { HttpError } from "../../http/errors";
import type { SecretBox } from "../secret-box";
import { randomToken, sameSecret, sha256Hex } from "../tokens";
import { TtlCache } from "../ttl-cache";

export const STATE_COOKIE = "chopin_oauth_state";
/** The cookie is sent only to the callback's path. */
export const STATE_COOKIE_PATH = "/auth/github";
export const STATE_TTL_MS = 10 * 60_000;
const PURPOSE = "oauth-state";

const cookieSchema = z.strictObject({
	state: z.string(),
	next: z.string(),
	intent: z.string().optional(),
	expiresAt: z.number(),
});
export type PendingSignIn = z.infer<typeof cookieSchema>;

/**
 * The cookie holds the state, where to go next and when it expires, sealed with the server's
 * key, so any process sharing the key can check it (no server-side table). A state that was
 * used is remembered until it would have expired anyway, so a replayed callback is refused.
 */
export class OAuthStates {
	readonly #used: TtlCache<true>;

	constructor(
		readonly box: SecretBox,
		readonly clock: Pick<Clock, "now">,
	) {
		this.#used = new TtlCache(STATE_TTL_MS, clock);
	}

	async issue(next: string, intent?: string): Promise<{ state: string; cookie: string }> {
		const state = randomToken();
		const pending: PendingSignIn = { state, next, intent, expiresAt: this.clock.now() + STATE_TTL_MS };
		return { state, cookie: await this.box.sealText(JSON.stringify(pending), PURPOSE) };
	}

	/** The pending sign-in when the callback's state matches the browser's cookie; 400 oauth-state-invalid otherwise. */
	async consume(cookie: string | undefined, given: string | null): Promise<PendingSignIn> {
		if (!cookie || !given) throw invalid("The sign-in did not start in this browser, or took too long.");
		let pending: PendingSignIn;
		try {
			pending = cookieSchema.parse(JSON.parse(await this.box.openText(cookie, PURPOSE)));
		} catch {
			throw invalid("The sign-in did not start in this browser, or took too long.");
		}
		if (pending.expiresAt <= this.clock.now()) throw invalid("The sign-in took longer than 10 minutes.");
		if (!sameSecret(given, pending.state))
			throw invalid("The sign-in's state does not match this browser's.");
		const key = sha256Hex(pending.state);
		if (this.#used.get(key)) throw invalid("This sign-in link was already used.");
		this.#used.set(key, true);
		return pending;
	}
}

function invalid(message: string): HttpError {
	return new HttpError(400, "oauth-state-invalid", message, "Start the sign-in again from Chopin.");
}
