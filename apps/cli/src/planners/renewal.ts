// Renewing a running backend's token files before they expire, and what a failed credential request means:
// the machine refused for good, the document refused, or Chopin unreachable for now (keep the file, try again).
import { type Backoff, reconnectBackoff } from "@chopin/agent-link/backoff";
import type { Clock, Timer } from "@chopin/agent-link/clock";
import type { GitHubToken } from "@chopin/agent-link/machine";
import type { Logger } from "../local/log";
import { CliError } from "../program/errors";
import { isFinalRefusal } from "../server-link/server-errors";

/** The Planner credential is renewed this long before it expires. */
export const PLANNER_RENEW_BEFORE_MS = 5 * 60_000;
/** The GitHub token is renewed this long before it expires. */
export const GITHUB_RENEW_BEFORE_MS = 25 * 60_000;

export type Verdict = "machine" | "document" | "retry";

/** What a failed credential request means: the machine is refused, the document is, or try again later. */
export function verdictOf(error: unknown): Verdict {
	if (!(error instanceof CliError)) return "retry";
	if (isFinalRefusal(error.code) || isFinalRefusal(error.serverCode)) return "machine";
	if (
		error.code === "server-refused" &&
		error.status !== undefined &&
		error.status < 500 &&
		error.status !== 429
	)
		return "document";
	return "retry";
}

export interface RenewalOptions {
	clock: Clock;
	log: Logger;
	/** For the log lines. */
	document: () => string | undefined;
	/** A renewal refused for good: the supervisor decides what stops. */
	onRefused(verdict: "machine" | "document", error: unknown): void;
	backoff?: Backoff;
}

/** The timers of one launch's renewals; cancel() when the backend stops. */
export class Renewals {
	readonly #o: RenewalOptions;
	readonly #backoff: Backoff;
	#timers: Timer[] = [];
	#cancelled = false;

	constructor(options: RenewalOptions) {
		this.#o = options;
		this.#backoff = options.backoff ?? reconnectBackoff();
	}

	/**
	 * Runs `renew` `before` ms ahead of `expiresAt`; `renew` writes the new file and answers the
	 * next expiry (undefined: nothing more to renew). While Chopin cannot be reached it is tried
	 * again on the reconnect schedule, and the file it has is kept.
	 */
	schedule(what: string, expiresAt: number, before: number, renew: () => Promise<number | undefined>): void {
		const { clock, log } = this.#o;
		const attempt = () => {
			if (this.#cancelled) return;
			renew().then(
				(next) => {
					if (this.#cancelled) return;
					this.#backoff.reset();
					log.info({ document: this.#o.document() }, `renewed the ${what} file`);
					if (next !== undefined) this.schedule(what, next, before, renew);
				},
				(error: unknown) => {
					if (this.#cancelled) return;
					const verdict = verdictOf(error);
					if (verdict !== "retry") return this.#o.onRefused(verdict, error);
					const delayMs = this.#backoff.next();
					log.warn(
						{ document: this.#o.document(), delayMs, reason: (error as Error).message },
						`could not renew the ${what}; keeping the file and trying again`,
					);
					this.#timers.push(clock.setTimeout(attempt, delayMs));
				},
			);
		};
		this.#timers.push(clock.setTimeout(attempt, Math.max(0, expiresAt - before - clock.now())));
	}

	cancel(): void {
		this.#cancelled = true;
		for (const timer of this.#timers.splice(0)) timer.cancel();
	}
}

/**
 * A GitHub token file kept current: `renew` asks for a new token 25 minutes before this one expires, registers it
 * as a secret and writes it (a Planner backend's and a build's alike). No token any more: nothing more to renew.
 */
export function scheduleGitHubRenewal(
	renewals: Renewals,
	options: {
		expiresAt: number;
		fetch(): Promise<GitHubToken | undefined>;
		write(token: string): void;
		secret(token: string, expiresAt: number): void;
	},
): void {
	renewals.schedule("GitHub token", options.expiresAt, GITHUB_RENEW_BEFORE_MS, async () => {
		const token = await options.fetch();
		if (!token) return undefined;
		options.secret(token.token, token.expiresAt);
		options.write(token.token);
		return token.expiresAt;
	});
}
