/**
 * The reconnect rule for callers (spec: When the server is restarting): after a 1012 close
 * connect again at once; while the new process refuses with retry, try the same resume every
 * 250 ms until reconnectWithinMs has passed since the close; then fall back to the caller's
 * backoff. The client itself never reconnects: a backend calls this when its link drops.
 */
import { type Backoff, reconnectBackoff } from "../backoff";
import { type Clock, systemClock } from "../clock";
import { TIMING } from "../protocol";
import { connectAgent } from "./connection";
import { isRetryable, LinkError } from "./errors";
import type { AgentLink } from "./link";
import type { LinkClosed } from "./link-closed";
import type { ConnectOptions } from "./options";

export type ReconnectEvent =
	| { type: "waiting"; ms: number; rule: "restart" | "backoff" }
	| { type: "attempt"; attempt: number }
	| { type: "failed"; attempt: number; error: unknown };

export interface ReconnectOptions {
	/** Times the waits; default the connect options' clock, else the system clock. */
	clock?: Clock;
	/** The caller's own backoff, used outside a restart's window. Default reconnectBackoff(). */
	backoff?: Backoff;
	signal?: AbortSignal;
	/** Which failures to try again after; default isRetryable (refused with retry, 5xx, dropped sockets). */
	shouldRetry?: (error: unknown) => boolean;
	onEvent?: (event: ReconnectEvent) => void;
}

/**
 * Connects again after closed, passing closed.resume, until a link is ready; throws the first
 * failure that is not worth retrying. options may be a function, read before each attempt (a
 * backend reads its credential file again there).
 */
export async function reconnectAgent(
	options: ConnectOptions | (() => ConnectOptions | Promise<ConnectOptions>),
	closed: LinkClosed,
	reconnect: ReconnectOptions = {},
): Promise<AgentLink> {
	if (closed.error || (closed.refused && !closed.refused.retry)) {
		throw new LinkError(
			"link-closed",
			"The link ended for good (refused or a protocol error), so there is nothing to reconnect.",
			"Connect afresh only once the cause is fixed.",
			closed,
		);
	}
	const first = typeof options === "function" ? undefined : options;
	const clock = reconnect.clock ?? first?.clock ?? systemClock({ unref: true });
	const backoff = reconnect.backoff ?? reconnectBackoff();
	const shouldRetry = reconnect.shouldRetry ?? isRetryable;
	const emit = (event: ReconnectEvent) => reconnect.onEvent?.(event);
	let restart = closed.code === 1012 ? { at: clock.now(), within: closed.reconnectWithinMs ?? 0 } : undefined;
	let delay = restart ? 0 : backoff.next();
	let rule: "restart" | "backoff" = "backoff";
	for (let attempt = 1; ; attempt++) {
		if (delay > 0) {
			emit({ type: "waiting", ms: delay, rule });
			await clock.sleep(delay, reconnect.signal);
		}
		const base = typeof options === "function" ? await options() : options;
		emit({ type: "attempt", attempt });
		try {
			const link = await connectAgent({ ...base, resume: closed.resume, clock: base.clock ?? clock });
			backoff.reset();
			return link;
		} catch (error) {
			emit({ type: "failed", attempt, error });
			if (!shouldRetry(error)) throw error;
			const again = error instanceof LinkError ? error.closed : undefined;
			if (again?.code === 1012) {
				// Restarting again before the link was ready: the rule starts over from this close.
				restart = { at: clock.now(), within: again.reconnectWithinMs ?? 0 };
				delay = 0;
				continue;
			}
			const inWindow = restart !== undefined && clock.now() - restart.at < restart.within;
			rule = inWindow ? "restart" : "backoff";
			delay = inWindow ? TIMING.restartResumeRetryMs : backoff.next();
		}
	}
}
