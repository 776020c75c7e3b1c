// Noticing that the server can be reached again while the control channel is down: one cheap HTTP request
// (`GET /api/connector/ping`, no database) every 1 to 2 s, so a machine is back within a couple of seconds of the
// network or the server returning, whatever the reconnect schedule says, and a down server gets one request per
// machine every second and a half. An attempt sent while the network was known down is given up the moment the
// server answers again (its bytes may have been dropped on the way: it would only wait out its timeout).
import type { Clock, Timer } from "@chopin/agent-link/clock";

/** What a reach answered: the server answered HTTP, it did not (refused, timed out, a proxy's 5xx), or it is shedding. */
export type Reach = "up" | "down" | { busyForMs: number };

/** A reach every REACH_EVERY_MS[0] to REACH_EVERY_MS[1] (uniform: a crowd of machines does not probe in step). */
export const REACH_EVERY_MS = [1_000, 2_000] as const;
/** A reach that has no answer in this long counts as down. */
export const REACH_TIMEOUT_MS = 1_000;
export const PING_PATH = "/api/connector/ping";

/** The HTTP reach: any answer below 500 is up; 503 with Retry-After is the server asking to wait; the rest is down. */
export function httpReach(options: {
	server: string;
	fetch: typeof fetch;
	clock: Clock;
	client: string;
}): (signal: AbortSignal) => Promise<Reach> {
	const url = new URL(PING_PATH, options.server).href;
	return async (signal) => {
		const timeout = new AbortController();
		const timer = options.clock.setTimeout(() => timeout.abort(), REACH_TIMEOUT_MS);
		const onAbort = () => timeout.abort();
		signal.addEventListener("abort", onAbort, { once: true });
		try {
			const res = await options.fetch(url, {
				signal: timeout.signal,
				headers: { "chopin-client": options.client },
				redirect: "manual",
			});
			await res.body?.cancel();
			if (res.status === 503 || res.status === 429) {
				const seconds = Number(res.headers.get("retry-after"));
				if (Number.isFinite(seconds) && seconds > 0) return { busyForMs: seconds * 1_000 };
			}
			return res.status < 500 ? "up" : "down";
		} catch {
			return "down";
		} finally {
			timer.cancel();
			signal.removeEventListener("abort", onAbort);
		}
	};
}

export interface ReachLoopOptions {
	clock: Clock;
	reach: (signal: AbortSignal) => Promise<Reach>;
	random: () => number;
	/** The server answered after it had not (or on the first reach). */
	onAnswer(reach: Exclude<Reach, "down">, downAt: number | undefined): void;
}

/** Reaches on its schedule from start() to stop(); remembers when the server was last seen down. */
export class ReachLoop {
	readonly #o: ReachLoopOptions;
	#timer: Timer | undefined;
	#abort: AbortController | undefined;
	#running = false;
	/** When a reach last found the server down (undefined: not since the loop started). */
	lastDownAt: number | undefined;

	constructor(options: ReachLoopOptions) {
		this.#o = options;
	}

	get running(): boolean {
		return this.#running;
	}

	start(): void {
		if (this.#running) return;
		this.#running = true;
		this.lastDownAt = undefined;
		this.#schedule();
	}

	stop(): void {
		this.#running = false;
		this.#timer?.cancel();
		this.#timer = undefined;
		this.#abort?.abort();
		this.#abort = undefined;
	}

	/** The next reach, its interval counted from when the last one began (a reach that timed out is not a pause). */
	#schedule(lastStartedAt?: number): void {
		const [min, max] = REACH_EVERY_MS;
		const every = Math.round(min + (max - min) * this.#o.random());
		const now = this.#o.clock.now();
		const delay = lastStartedAt === undefined ? every : Math.max(0, lastStartedAt + every - now);
		this.#timer = this.#o.clock.setTimeout(() => void this.#reach(), delay);
	}

	async #reach(): Promise<void> {
		if (!this.#running) return;
		const startedAt = this.#o.clock.now();
		const abort = new AbortController();
		this.#abort = abort;
		const answer = await this.#o.reach(abort.signal);
		if (!this.#running || abort.signal.aborted) return;
		// Down until at least when the reach gave up: an attempt sent before then went into the same dead network.
		if (answer === "down") this.lastDownAt = this.#o.clock.now();
		else this.#o.onAnswer(answer, this.lastDownAt);
		if (this.#running) this.#schedule(startedAt);
	}
}
