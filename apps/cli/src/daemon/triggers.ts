// Noticing that the connection is probably dead before any timeout says so: the machine woke from sleep (the clock
// jumped past a periodic tick) or its network changed (the interface addresses differ). Both are seams for tests.
import type { NetworkInterfaceInfo } from "node:os";
import type { Clock, Timer } from "@chopin/agent-link/clock";

/** Something that says "try now": subscribe returns the unsubscribe. */
export interface Trigger {
	subscribe(fn: (why: string) => void): () => void;
}

/** A trigger fired by hand: what tests inject, and the base of the two below. */
export class ManualTrigger implements Trigger {
	readonly #listeners = new Set<(why: string) => void>();

	subscribe(fn: (why: string) => void): () => void {
		this.#listeners.add(fn);
		return () => this.#listeners.delete(fn);
	}

	fire(why: string): void {
		for (const fn of [...this.#listeners]) fn(why);
	}

	get listeners(): number {
		return this.#listeners.size;
	}
}

/** Runs `check` every `everyMs` on the clock while anyone listens. */
abstract class PollingTrigger extends ManualTrigger {
	#timer: Timer | undefined;

	constructor(
		protected readonly clock: Clock,
		protected readonly everyMs: number,
	) {
		super();
	}

	override subscribe(fn: (why: string) => void): () => void {
		const unsubscribe = super.subscribe(fn);
		if (!this.#timer) {
			this.start();
			this.#schedule();
		}
		return () => {
			unsubscribe();
			if (this.listeners === 0) {
				this.#timer?.cancel();
				this.#timer = undefined;
			}
		};
	}

	protected start(): void {}
	protected abstract check(): void;

	#schedule(): void {
		this.#timer = this.clock.setTimeout(() => {
			this.check();
			if (this.listeners > 0) this.#schedule();
		}, this.everyMs);
	}
}

/**
 * A machine that slept does not run timers: the first tick after it wakes finds wall time moved
 * far more than the tick. A busy event loop can look the same; that only costs a ping.
 */
export class WakeDetector extends PollingTrigger {
	#last = 0;

	constructor(
		clock: Clock,
		everyMs = 5_000,
		private readonly jumpMs = 15_000,
	) {
		super(clock, everyMs);
	}

	protected override start(): void {
		this.#last = this.clock.now();
	}

	protected check(): void {
		const now = this.clock.now();
		const gap = now - this.#last;
		this.#last = now;
		if (gap - this.everyMs >= this.jumpMs) this.fire(`woke up after ${Math.round(gap / 1000)} s`);
	}
}

export type InterfaceList = () => NodeJS.Dict<NetworkInterfaceInfo[]>;

/** Polls the network interfaces' addresses; any change (joined a network, left one, new address) fires. */
export class NetworkWatcher extends PollingTrigger {
	#signature = "";

	constructor(
		clock: Clock,
		private readonly interfaces: InterfaceList,
		everyMs = 3_000,
	) {
		super(clock, everyMs);
	}

	protected override start(): void {
		this.#signature = this.#read();
	}

	protected check(): void {
		const signature = this.#read();
		if (signature === this.#signature) return;
		this.#signature = signature;
		this.fire("the network interfaces changed");
	}

	#read(): string {
		let list: NodeJS.Dict<NetworkInterfaceInfo[]>;
		try {
			list = this.interfaces();
		} catch {
			return this.#signature;
		}
		return Object.entries(list)
			.flatMap(([name, infos]) =>
				(infos ?? [])
					.filter((info) => !info.internal)
					.map((info) => `${name} ${info.family} ${info.address}`),
			)
			.sort()
			.join("\n");
	}
}
