// The daemon's control channel kept up: one socket at a time, transient failures retried on the reconnect schedule
// (at once after a 1012, a wake or a network change), and the four final refusals ending it with their CliError.
import type { Backoff } from "@chopin/agent-link/backoff";
import type { Clock, Timer } from "@chopin/agent-link/clock";
import type {
	Assignment,
	MACHINE_REFUSALS,
	MachineClientMessage,
	MachineServerMessage,
} from "@chopin/agent-link/machine";
import type { Logger } from "../local/log";
import type { OpenWebSocket } from "../program/context";
import type { CliError } from "../program/errors";
import { Channel, type ChannelOutcome } from "./channel";
import { describeOutcome, finalErrorOf, nextDelay, summary } from "./outcomes";
import { type Reach, ReachLoop } from "./reach";
import type { Trigger } from "./triggers";

type Welcome = Extract<MachineServerMessage, { type: "welcome" }>;
type RefusalCode = keyof typeof MACHINE_REFUSALS;
/** What hello and report carry: the machine's complete state. */
export type MachineState = Omit<Extract<MachineClientMessage, { type: "report" }>, "type">;

export type LinkState = "connecting" | "connected" | "waiting" | "stopped";

export interface LinkSnapshot {
	state: LinkState;
	/** When the state began. */
	since: number;
	/** Attempts since the last welcome (0 while connected). */
	attempts: number;
	/** The last frame heard from the server. */
	lastContact: number | undefined;
	nextAttemptAt: number | undefined;
	/** Why the last attempt or connection ended, while not connected. */
	lastError: string | undefined;
	welcome: Welcome | undefined;
	/** The documents the server asks this machine to run (the welcome's, then each `planners`). */
	planners: Assignment[];
}

/** What the loop did, for the log and for tests that follow the schedule without timing it. */
export type LinkEvent =
	| { type: "attempt"; attempt: number }
	| { type: "connected"; welcome: Welcome }
	| { type: "ended"; outcome: ChannelOutcome }
	| { type: "waiting"; delayMs: number; why: string };

export interface ControlLinkOptions {
	server: string;
	token: string;
	/** The Chopin-Client header. */
	client: string;
	open: OpenWebSocket;
	clock: Clock;
	log: Logger;
	backoff: Backoff;
	state(): MachineState;
	/** A final refusal (revoked, reauthorize, version, access lost) as the CliError to end with. */
	finalError(code: RefusalCode, message: string): CliError;
	/** A wake from sleep or a network change: retry at once, or probe a socket that may be dead. */
	triggers?: readonly Trigger[];
	/**
	 * Asks whether the server answers (reach.ts), on its own short schedule while the channel is down: a machine
	 * waiting out the schedule after a network failure tries at once when it does, and an attempt sent while the
	 * network was down is given up. Without it the schedule alone decides.
	 */
	reach?: (signal: AbortSignal) => Promise<Reach>;
	/** The reach schedule's randomness (Math.random). */
	random?: () => number;
	handshakeTimeoutMs?: number;
	silenceMs?: number;
	probeMs?: number;
	onEvent?(event: LinkEvent): void;
	onMessage?(message: MachineServerMessage): void;
}

/**
 * How long an attempt (the upgrade and the welcome) may take. An attempt held by a stalled network completes the
 * moment it is back; one whose bytes were dropped never does, so it is bounded well below the ping timeouts (and
 * the reach gives it up sooner once the server answers again).
 */
export const HANDSHAKE_TIMEOUT_MS = 10_000;
/** 2.5 times the server's 15 s ping interval: two pings missed, and a slow third. */
export const SILENCE_MS = 37_500;
/** After a wake or a network change, a live socket answers a ping well within this. */
export const PROBE_MS = 5_000;

export class ControlLink {
	readonly #o: ControlLinkOptions;
	#state: LinkState = "connecting";
	#since: number;
	#attempts = 0;
	#lastContact: number | undefined;
	#nextAttemptAt: number | undefined;
	#lastError: string | undefined;
	#welcome: Welcome | undefined;
	#planners: Assignment[] = [];
	#channel: Channel | undefined;
	#stopping = false;
	#wakeWait: (() => void) | undefined;
	#unsubscribe: (() => void)[] = [];
	/** The state as the server last heard it (hello or report). */
	#lastSent: string | undefined;
	readonly #reach: ReachLoop | undefined;
	/** When the current attempt started. */
	#attemptStartedAt = 0;
	/** The last channel failed on the network (not refused by the server): a reach that answers may end the wait. */
	#networkDown = false;
	/**
	 * A reach has answered since the channel was last up. Until one does, an attempt after a network failure is sent
	 * blind: the network may have come back after its bytes were dropped, before any reach could see it down.
	 */
	#reachedSinceUp = false;
	/** The attempt in flight was sent blind (see #reachedSinceUp). */
	#sentBlind = false;
	/**
	 * When the last attempt was refused with a 5xx without a Retry-After (a proxy's 502 while the server behind it
	 * restarts): a reach that finds the server down after it and then up again ends the wait.
	 */
	#refused5xxAt: number | undefined;
	/** The server asked (503 with Retry-After on a reach) not to be tried before this. */
	#notBefore = 0;

	constructor(options: ControlLinkOptions) {
		this.#o = options;
		this.#since = options.clock.now();
		this.#reach =
			options.reach &&
			new ReachLoop({
				clock: options.clock,
				reach: options.reach,
				random: options.random ?? Math.random,
				onAnswer: (answer, downAt) => this.#answered(answer, downAt),
			});
	}

	snapshot(): LinkSnapshot {
		return {
			state: this.#state,
			since: this.#since,
			attempts: this.#attempts,
			lastContact: this.#lastContact,
			nextAttemptAt: this.#state === "waiting" ? this.#nextAttemptAt : undefined,
			lastError: this.#state === "connected" ? undefined : this.#lastError,
			welcome: this.#welcome,
			planners: this.#planners,
		};
	}

	/** Keeps the channel up until stop() (resolves) or a final refusal (rejects with its CliError). */
	async run(): Promise<void> {
		for (const trigger of this.#o.triggers ?? [])
			this.#unsubscribe.push(trigger.subscribe((why) => this.#triggered(why)));
		try {
			while (!this.#stopping) {
				const started = this.#o.clock.now();
				const outcome = await this.#attempt();
				if (outcome.kind === "ended" && outcome.why === "stop") break;
				const final = finalErrorOf(outcome, this.#o);
				if (final) {
					this.#o.log.error({ code: final.code }, final.message);
					throw final;
				}
				this.#lastError = describeOutcome(outcome);
				this.#o.log.info({ outcome: summary(outcome), reason: this.#lastError }, "control channel down");
				if (this.#stopping) break;
				const { delayMs, why } = nextDelay(outcome, started, this.#o);
				this.#networkDown = outcome.kind !== "refused";
				this.#refused5xxAt =
					outcome.kind === "refused" && outcome.status >= 500 && outcome.body?.retryAfter === undefined
						? this.#o.clock.now()
						: undefined;
				this.#o.onEvent?.({ type: "waiting", delayMs, why });
				this.#o.log.info({ delayMs, why }, delayMs === 0 ? "reconnecting at once" : "reconnecting later");
				if (delayMs > 0) await this.#wait(delayMs);
				// The server asked for a pause (a reach answered 503 with Retry-After): it has it.
				const busy = this.#notBefore - this.#o.clock.now();
				if (busy > 0 && !this.#stopping) await this.#wait(busy);
			}
		} finally {
			this.#reach?.stop();
			this.#setState("stopped");
			for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe();
		}
	}

	/** Closes the channel with 1000 and ends run(). */
	async stop(): Promise<void> {
		this.#stopping = true;
		this.#wakeWait?.();
		await this.#channel?.close();
	}

	/**
	 * Sends the machine's state as a report when it changed since the server last heard it and the
	 * channel is up (the next hello carries it otherwise).
	 */
	report(): void {
		const state = this.#o.state();
		const text = JSON.stringify(state);
		if (text === this.#lastSent) return;
		if (this.#channel?.send({ type: "report", ...state })) {
			this.#lastSent = text;
			this.#o.log.debug("report sent");
		}
	}

	/** Sends a message now when the channel is up (a planner-event); false when it is down and the message dropped. */
	send(message: MachineClientMessage): boolean {
		return this.#channel?.send(message) ?? false;
	}

	async #attempt(): Promise<ChannelOutcome> {
		const o = this.#o;
		this.#attempts += 1;
		this.#attemptStartedAt = o.clock.now();
		this.#sentBlind = this.#networkDown && !this.#reachedSinceUp;
		this.#setState("connecting");
		this.#reach?.start();
		o.onEvent?.({ type: "attempt", attempt: this.#attempts });
		o.log.info({ server: o.server, attempt: this.#attempts }, "connecting to the server");
		const channel = new Channel({
			url: o.server,
			headers: { authorization: `Bearer ${o.token}`, "chopin-client": o.client },
			open: o.open,
			clock: o.clock,
			log: o.log,
			handshakeTimeoutMs: o.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS,
			silenceMs: o.silenceMs ?? SILENCE_MS,
			hello: () => {
				const state = o.state();
				this.#lastSent = JSON.stringify(state);
				return { type: "hello", version: 1, ...state };
			},
			onWelcome: (welcome) => this.#welcomed(welcome),
			onMessage: (message) => {
				if (message.type === "planners") this.#planners = message.planners;
				o.onMessage?.(message);
			},
			onContact: (at) => {
				this.#lastContact = at;
			},
		});
		this.#channel = channel;
		const outcome = await channel.done;
		this.#channel = undefined;
		o.onEvent?.({ type: "ended", outcome });
		return outcome;
	}

	#welcomed(welcome: Welcome): void {
		this.#reach?.stop();
		this.#networkDown = false;
		this.#refused5xxAt = undefined;
		this.#reachedSinceUp = false;
		this.#welcome = welcome;
		this.#planners = welcome.planners;
		// The schedule starts over after a connection the server welcomed.
		this.#o.backoff.reset();
		this.#attempts = 0;
		this.#setState("connected");
		this.#o.log.info(
			{ machine: welcome.machine.id, owner: welcome.machine.owner, planners: welcome.planners.length },
			"connected",
		);
		this.#o.onEvent?.({ type: "connected", welcome });
		// Whatever changed while the hello was on its way goes out now.
		this.report();
	}

	#wait(delayMs: number): Promise<void> {
		const { clock } = this.#o;
		this.#nextAttemptAt = clock.now() + delayMs;
		this.#setState("waiting");
		return new Promise<void>((resolve) => {
			let timer: Timer | undefined;
			const done = () => {
				timer?.cancel();
				this.#wakeWait = undefined;
				resolve();
			};
			this.#wakeWait = done;
			timer = clock.setTimeout(done, delayMs);
		});
	}

	/**
	 * The server answered a reach. Waiting after a network failure: try now. Connecting with an attempt sent while
	 * the network was down (it may have been dropped on the way), or sent blind after a network failure before any
	 * reach answered (the network may have come back between the two): give it up and try now. Busy: not before it
	 * says.
	 */
	#answered(answer: Exclude<Reach, "down">, downAt: number | undefined): void {
		if (this.#stopping) return;
		const { clock, log } = this.#o;
		if (answer !== "up") {
			this.#notBefore = clock.now() + answer.busyForMs;
			return;
		}
		// Once per outage at most for a blind attempt: the one after it is sent knowing the server answers.
		const blind = this.#sentBlind;
		this.#sentBlind = false;
		this.#reachedSinceUp = true;
		const intoTheDark = blind || (downAt !== undefined && this.#attemptStartedAt <= downAt);
		// After a 5xx, only a reach that saw the server down since: a server whose upgrade fails while its ping
		// answers is left to the schedule rather than tried at every reach.
		const backFrom5xx =
			this.#refused5xxAt !== undefined && downAt !== undefined && downAt >= this.#refused5xxAt;
		if (this.#state === "waiting" && (this.#networkDown || backFrom5xx) && clock.now() >= this.#notBefore) {
			log.info("the server answers again: reconnecting at once");
			this.#wakeWait?.();
		} else if (this.#state === "connecting" && intoTheDark && !this.#channel?.opened) {
			// Not one already upgraded: the server answered it, so its bytes got through, and a server slow enough
			// for a reach to time out is still working on its hello. Giving that up put the machine at the back
			// of the crowd again: under load, hundreds of attempts a storm were thrown away so (issue 19).
			log.info("the server answers again: giving up the attempt sent while it could not be reached");
			this.#channel?.probe(0);
		}
	}

	#triggered(why: string): void {
		if (this.#stopping) return;
		this.#o.log.info({ why, state: this.#state }, "network change or wake-up noticed");
		if (this.#state === "waiting") this.#wakeWait?.();
		else this.#channel?.probe(this.#o.probeMs ?? PROBE_MS);
	}

	#setState(state: LinkState): void {
		if (this.#state === state) return;
		this.#state = state;
		this.#since = this.#o.clock.now();
	}
}
