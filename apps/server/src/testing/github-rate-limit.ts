// GitHub's REST rate limits: the x-ratelimit-* headers on every API answer, the primary limit
// (5,000 an hour per user, 60 per address without a token) and the two ways a limit is refused.
import type { Clock } from "../../../../packages/agent-link/src/clock";
import { apiResponse, errorBody, requestId } from "./github-shapes";

export const AUTHENTICATED_LIMIT = 5000;
export const ANONYMOUS_LIMIT = 60;
const WINDOW_MS = 60 * 60_000;
const RATE_LIMIT_DOCS = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api";

/** Who a request counts against: a user (by id) or, without a token, its address. */
export type Caller = { kind: "user"; id: number } | { kind: "anonymous" };

interface Bucket {
	used: number;
	resetAt: number;
}

export interface RateState {
	limit: number;
	used: number;
	resetAt: number;
}

export function rateHeaders(state: RateState): Record<string, string> {
	return {
		"x-ratelimit-limit": String(state.limit),
		"x-ratelimit-remaining": String(Math.max(0, state.limit - state.used)),
		"x-ratelimit-reset": String(Math.ceil(state.resetAt / 1000)),
		"x-ratelimit-used": String(state.used),
		"x-ratelimit-resource": "core",
	};
}

export class RateLimiter {
	readonly #buckets = new Map<string, Bucket>();

	constructor(readonly clock: Clock) {}

	/** The caller's window as it stands; counts one request when `count` is set. */
	state(caller: Caller, count: boolean): RateState {
		const key = caller.kind === "user" ? `user:${caller.id}` : "anonymous";
		const limit = caller.kind === "user" ? AUTHENTICATED_LIMIT : ANONYMOUS_LIMIT;
		const now = this.clock.now();
		let bucket = this.#buckets.get(key);
		if (!bucket || now >= bucket.resetAt) {
			bucket = { used: 0, resetAt: now + WINDOW_MS };
			this.#buckets.set(key, bucket);
		}
		if (count && bucket.used < limit) bucket.used++;
		return { limit, used: bucket.used, resetAt: bucket.resetAt };
	}
}

/**
 * A primary limit refusal: x-ratelimit-remaining 0 and x-ratelimit-reset say when to retry.
 * GitHub documents 403 or 429 for it; 403 is what it answers today.
 */
export function primaryLimitResponse(caller: Caller, state: RateState, status: 403 | 429 = 403): Response {
	const id = requestId();
	const who = caller.kind === "user" ? `user ID ${caller.id}` : "127.0.0.1";
	const message = `API rate limit exceeded for ${who}. If you reach out to GitHub Support for help, please include the request ID ${id}.`;
	return apiResponse(errorBody(status, message, RATE_LIMIT_DOCS), status, {
		...rateHeaders({ ...state, used: state.limit }),
		"x-github-request-id": id,
	});
}

/** A secondary limit refusal: retry-after says how many seconds to wait. */
export function secondaryLimitResponse(
	state: RateState,
	retryAfterSeconds: number,
	status: 403 | 429 = 429,
): Response {
	const id = requestId();
	const message = `You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID ${id}.`;
	return apiResponse(errorBody(status, message, `${RATE_LIMIT_DOCS}#about-secondary-rate-limits`), status, {
		...rateHeaders(state),
		"retry-after": String(retryAfterSeconds),
		"x-github-request-id": id,
	});
}
