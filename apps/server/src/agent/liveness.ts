// A connection's liveness on the injected clock (spec: Pings): a ping every interval from the moment it opens,
// none while frames are queued, and a drop after the timeout unheard or the longest silence without a frame.
import type { Clock, Timer } from "@chopin/agent-link/clock";

export interface LivenessSettings {
	/** AGENT_CONNECTION_PING_MS */
	pingMs: number;
	/** AGENT_CONNECTION_TIMEOUT_MS: unheard for this long is dropped (a shrinking queue puts it off). */
	timeoutMs: number;
	/** AGENT_CONNECTION_MAX_SILENCE_MS: no frame at all for this long is dropped, however the queue drains. */
	maxSilenceMs: number;
}

/** The socket as liveness needs it: Bun's ServerWebSocket fits. */
export interface PingTarget {
	ping(): unknown;
	getBufferedAmount(): number;
}

/**
 * Timers are lazy: hearing a frame only moves a number, and the deadline timer, when it fires,
 * re-arms itself for the new deadline. So a link that streams thousands of frames a second costs
 * no timer work per frame. Any socket shared with other kinds (machines, /ws) can use it too.
 */
export class Liveness {
	#lastHeard: number;
	#lastShrink: number;
	#lastBuffered = 0;
	#pingTimer: Timer | undefined;
	#deadlineTimer: Timer | undefined;
	#stopped = false;

	constructor(
		private readonly clock: Clock,
		private readonly settings: LivenessSettings,
		private readonly socket: PingTarget,
		/** Called once when the connection is to be dropped as unresponsive. */
		private readonly onUnresponsive: () => void,
	) {
		this.#lastHeard = clock.now();
		this.#lastShrink = this.#lastHeard;
		this.#schedulePing();
		this.#armDeadline();
	}

	/** Any frame from the client: a message, a ping or a pong. */
	heard(): void {
		this.#lastHeard = this.clock.now();
	}

	/** The socket's queue got shorter (Bun's drain): puts off the timeout, without counting as hearing. */
	drained(): void {
		this.#lastShrink = this.clock.now();
		this.#lastBuffered = this.socket.getBufferedAmount();
	}

	stop(): void {
		this.#stopped = true;
		this.#pingTimer?.cancel();
		this.#deadlineTimer?.cancel();
	}

	/** When the connection is dropped unless something is heard or the queue shrinks first. */
	deadline(): number {
		const unheard = Math.max(this.#lastHeard, this.#lastShrink) + this.settings.timeoutMs;
		return Math.min(unheard, this.#lastHeard + this.settings.maxSilenceMs);
	}

	#observeQueue(): number {
		const buffered = this.socket.getBufferedAmount();
		if (buffered < this.#lastBuffered) this.#lastShrink = this.clock.now();
		this.#lastBuffered = buffered;
		return buffered;
	}

	#schedulePing(): void {
		this.#pingTimer = this.clock.setTimeout(() => {
			if (this.#stopped) return;
			// A ping can be dropped from a full queue: send none while anything is queued.
			if (this.#observeQueue() === 0) this.socket.ping();
			this.#schedulePing();
		}, this.settings.pingMs);
	}

	#armDeadline(): void {
		this.#deadlineTimer = this.clock.setTimeout(
			() => {
				if (this.#stopped) return;
				this.#observeQueue();
				if (this.clock.now() >= this.deadline()) {
					this.stop();
					this.onUnresponsive();
					return;
				}
				this.#armDeadline();
			},
			Math.max(1, this.deadline() - this.clock.now()),
		);
	}
}
