// The browser sign-ins live on THIS process since it started: filled when a session is made or its cookie is presented, emptied on sign-out and expiry.
import type { Clock, Timer } from "@chopin/agent-link/clock";
import type { Authorization } from "./authorization";

/** A session this process has seen, with the authorization it acts with. */
export interface LiveSignIn {
	readonly sessionId: string;
	readonly login: string;
	readonly authorization: Authorization;
	readonly expiresAt: number;
	/** When this process last made or saw the session; the newest wins for liveSignIn(login). */
	seenAt: number;
	/** The profile /api/me answers with, kept so a request needs no query. */
	readonly name: string | null;
	readonly avatarUrl: string | null;
}

/** setTimeout's limit (2^31 - 1 ms, about 24.8 days): later deadlines are reached in steps. */
const MAX_TIMER_MS = 2_147_483_647;

/** Calls fn at `at` on the clock, however far off; cancel() stops it. */
export function timerAt(clock: Clock, at: number, fn: () => void): Timer {
	let timer: Timer;
	const arm = () => {
		const wait = at - clock.now();
		timer = clock.setTimeout(wait > MAX_TIMER_MS ? arm : fn, Math.min(Math.max(0, wait), MAX_TIMER_MS));
	};
	arm();
	return { cancel: () => timer.cancel() };
}

export class LiveSignIns {
	readonly #byId = new Map<string, { entry: LiveSignIn; timer: Timer }>();

	constructor(
		readonly clock: Clock,
		/** Called when a live session reaches its expiry. */
		readonly onExpiry: (entry: LiveSignIn) => void,
	) {}

	/** Adds or refreshes a session; its expiry timer is (re)armed. */
	add(entry: LiveSignIn): LiveSignIn {
		const existing = this.#byId.get(entry.sessionId);
		existing?.timer.cancel();
		const timer = timerAt(this.clock, entry.expiresAt, () => {
			if (this.#byId.get(entry.sessionId)?.entry === entry) this.onExpiry(entry);
		});
		this.#byId.set(entry.sessionId, { entry, timer });
		return entry;
	}

	get(sessionId: string): LiveSignIn | undefined {
		return this.#byId.get(sessionId)?.entry;
	}

	/** The login's most recently seen live session (logins compare without case). */
	latest(login: string): LiveSignIn | undefined {
		const key = login.toLowerCase();
		let best: LiveSignIn | undefined;
		for (const { entry } of this.#byId.values()) {
			if (entry.login.toLowerCase() !== key) continue;
			if (!best || entry.seenAt > best.seenAt) best = entry;
		}
		return best;
	}

	/** Every live session of a login. */
	all(login: string): LiveSignIn[] {
		const key = login.toLowerCase();
		return [...this.#byId.values()].map((v) => v.entry).filter((e) => e.login.toLowerCase() === key);
	}

	remove(sessionId: string): LiveSignIn | undefined {
		const held = this.#byId.get(sessionId);
		if (!held) return undefined;
		held.timer.cancel();
		this.#byId.delete(sessionId);
		return held.entry;
	}

	/** Cancels every timer (the server is stopping); the registry is empty afterwards. */
	clear(): void {
		for (const { timer } of this.#byId.values()) timer.cancel();
		this.#byId.clear();
	}

	get size(): number {
		return this.#byId.size;
	}
}
