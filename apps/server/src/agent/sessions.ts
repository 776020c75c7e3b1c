// A link's sessions: start (or fork) answered with started or start-failed within 10 seconds (else destroy), the turns
// each one runs, and destroy. Messages for a session that has ended are ignored (spec: Client to server).
import type { Clock, Timer } from "@chopin/agent-link/clock";
import { ANSWER_WITHIN_MS } from "./deps";
import type { PlannerTurn } from "./turns";
import { wording } from "./wording";

export type SessionMode = "planner" | "isolated";

export class PlannerSession {
	state: "starting" | "started" | "ended" = "starting";
	/** Every turn sent on it, ended ones too (so their late messages are recognised and ignored). */
	readonly turns = new Map<string, PlannerTurn>();
	/** The turn running now, if any. */
	current: PlannerTurn | undefined;
	/** Whether its latest runs report listed live or paused root runs: such a session is kept after its turn. */
	holdsRuns = false;

	constructor(
		readonly id: string,
		readonly mode: SessionMode,
	) {}

	get live(): boolean {
		return this.state !== "ended";
	}
}

export interface SessionHost {
	readonly clock: Clock;
	/** Sends start, fork or destroy; false when the link is closed. */
	send(
		message:
			| { type: "start"; session: string; mode: SessionMode }
			| { type: "fork"; session: string; mode: "planner"; from: { session: string; turn?: string } }
			| { type: "destroy"; session: string },
	): boolean;
	/** A session ended (its questions are withdrawn, its live runs stopped, its turn failed). */
	sessionEnded(session: PlannerSession, notify: boolean): void;
}

export class StartFailed extends Error {
	override readonly name = "StartFailed";
}

interface Starting {
	session: PlannerSession;
	timer: Timer;
	resolve(): void;
	reject(error: StartFailed): void;
}

export class SessionTable {
	readonly #sessions = new Map<string, PlannerSession>();
	readonly #starting = new Map<string, Starting>();

	constructor(private readonly host: SessionHost) {}

	get(id: string): PlannerSession | undefined {
		return this.#sessions.get(id);
	}

	/** The live sessions. */
	live(): PlannerSession[] {
		return [...this.#sessions.values()].filter((s) => s.live);
	}

	/**
	 * Sends start, or with `from` fork (session-forks: a planner session branched from that session and turn), and
	 * resolves once started; rejects StartFailed on start-failed or 10 s of silence (the session is destroyed).
	 */
	start(mode: SessionMode, from?: { session: string; turn: string }): Promise<PlannerSession> {
		const session = new PlannerSession(`s-${crypto.randomUUID()}`, mode);
		this.#sessions.set(session.id, session);
		return new Promise((resolve, reject) => {
			const timer = this.host.clock.setTimeout(
				() => this.#startEnded(session.id, new StartFailed(wording.startTimedOut())),
				ANSWER_WITHIN_MS,
			);
			this.#starting.set(session.id, {
				session,
				timer,
				resolve: () => resolve(session),
				reject,
			});
			const sent = from
				? this.host.send({ type: "fork", session: session.id, mode: "planner", from })
				: this.host.send({ type: "start", session: session.id, mode });
			if (!sent) {
				this.#startEnded(session.id, new StartFailed(wording.turnClosed()));
			}
		});
	}

	/** A started session carried over from another process's link (a restart's hold), under its own id. */
	adopt(id: string, mode: SessionMode = "planner"): PlannerSession {
		const session = new PlannerSession(id, mode);
		session.state = "started";
		this.#sessions.set(id, session);
		return session;
	}

	/** started: the session is ready for turns. */
	started(id: string): void {
		const starting = this.#starting.get(id);
		if (!starting) return;
		this.#starting.delete(id);
		starting.timer.cancel();
		starting.session.state = "started";
		starting.resolve();
	}

	/** start-failed: the session is destroyed and its start rejects with the client's message. */
	startFailed(id: string, message: string): void {
		this.#startEnded(id, new StartFailed(wording.startFailed(message)));
	}

	/** Ends a session the server no longer needs: destroy is sent when notify and the link is open. */
	destroy(session: PlannerSession, notify = true): void {
		if (!session.live) return;
		const starting = this.#starting.get(session.id);
		if (starting) {
			this.#starting.delete(session.id);
			starting.timer.cancel();
			starting.reject(new StartFailed(wording.turnClosed()));
		}
		session.state = "ended";
		// Forgotten once ended: a message naming it is for a session that has ended, as for any unknown one.
		this.#sessions.delete(session.id);
		if (notify) this.host.send({ type: "destroy", session: session.id });
		this.host.sessionEnded(session, notify);
	}

	/** The link closed: every session ends without a destroy. */
	closeAll(): void {
		for (const session of this.live()) this.destroy(session, false);
	}

	#startEnded(id: string, error: StartFailed): void {
		const starting = this.#starting.get(id);
		if (!starting) return;
		this.#starting.delete(id);
		starting.timer.cancel();
		// A session refused or not answered in time gets destroy (spec: start).
		starting.session.state = "ended";
		this.#sessions.delete(id);
		this.host.send({ type: "destroy", session: id });
		this.host.sessionEnded(starting.session, true);
		starting.reject(error);
	}
}
