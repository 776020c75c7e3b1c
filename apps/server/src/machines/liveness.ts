// The control channel's liveness, the agent connection's rules: a ping every interval (none while frames are queued), dropped when unheard.
import type { Clock, Timer } from "@chopin/agent-link/clock";

export interface LivenessOptions {
	clock: Clock;
	/** AGENT_CONNECTION_PING_MS. */
	pingMs: number;
	/** AGENT_CONNECTION_TIMEOUT_MS: unheard this long (a shrinking queue postpones it) is dropped. */
	timeoutMs: number;
	/** AGENT_CONNECTION_MAX_SILENCE_MS: nothing at all from the client this long is dropped, whatever drains. */
	maxSilenceMs: number;
	/** Sends a ping control frame. */
	ping(): void;
	/** Bytes queued for the client (ws.getBufferedAmount()). */
	queued(): number;
	/** The connection is dropped: close it with 1001 unresponsive. Called once. */
	onDead(): void;
}

/**
 * Pings run on the injected clock, not Bun's own timers, so a test drives minutes of silence in
 * milliseconds. Any frame from the client (a pong or a message) is hearing from it. A queue that
 * got shorter since the last tick puts the drop off by another timeout, but only until the
 * longest silence: the kernel or a proxy can drain it while the client reads nothing.
 */
export class Liveness {
	readonly #o: LivenessOptions;
	#lastHeard = 0;
	#lastProgress = 0;
	#lastQueued = 0;
	#timer: Timer | undefined;
	#stopped = false;

	constructor(options: LivenessOptions) {
		this.#o = options;
	}

	start(): void {
		const now = this.#o.clock.now();
		this.#lastHeard = now;
		this.#lastProgress = now;
		this.#schedule(now);
	}

	heard(): void {
		const now = this.#o.clock.now();
		this.#lastHeard = now;
		this.#lastProgress = now;
	}

	stop(): void {
		this.#stopped = true;
		this.#timer?.cancel();
		this.#timer = undefined;
	}

	#schedule(now: number): void {
		if (this.#stopped) return;
		const { pingMs, timeoutMs, maxSilenceMs } = this.#o;
		const next = Math.min(now + pingMs, this.#lastProgress + timeoutMs, this.#lastHeard + maxSilenceMs);
		this.#timer = this.#o.clock.setTimeout(() => this.#tick(), Math.max(0, next - now));
	}

	#tick(): void {
		if (this.#stopped) return;
		const now = this.#o.clock.now();
		const queued = this.#o.queued();
		if (queued < this.#lastQueued) this.#lastProgress = now;
		this.#lastQueued = queued;
		if (now - this.#lastProgress >= this.#o.timeoutMs || now - this.#lastHeard >= this.#o.maxSilenceMs) {
			this.stop();
			this.#o.onDead();
			return;
		}
		// A ping behind a full queue could be dropped; the client's reading it is what counts.
		if (queued === 0) this.#o.ping();
		this.#schedule(now);
	}
}
