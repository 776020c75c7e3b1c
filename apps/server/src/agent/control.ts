// Stop Planner and Resume Planner from the document page: stop or resume to every session with a fresh request
// id, control-result within 10 seconds, and Chat notices saying whether the client confirmed it (a late answer
// still counts and clears the Stop). A Stop is owed to a session until the client answers one: with
// resumable-sessions an owed Stop outlives a dropped link and is sent again first after resumed (spec: Resuming
// after a dropped link, "Stop is held, not lost"); a Resume is never held.
import type { ControlResult, ServerMessage } from "@chopin/agent-link";
import type { Clock, Timer } from "@chopin/agent-link/clock";
import type { Domain } from "../domain";
import type { Logger } from "../log";
import { ANSWER_WITHIN_MS } from "./deps";
import type { PlannerSession } from "./sessions";
import { wording } from "./wording";

export type ControlAction = "stop" | "resume";

export interface ControlsHost {
	readonly documentId: string;
	readonly domain: Domain;
	readonly clock: Clock;
	readonly log: Logger;
	send(message: ServerMessage): boolean;
}

/** One press of Stop or Resume (or the Stops sent again after a resume): its requests and how they were answered. */
interface Press {
	action: ControlAction;
	by: string;
	waiting: Set<string>;
	refused?: string;
	timer?: Timer;
	/** The 10 seconds passed with answers missing: Chat said so. */
	late: boolean;
	/** Stops owed from before the link dropped, sent again after resumed. */
	resent: boolean;
}

/** A Stop the client has not answered: of every run of the session, or of the runs named. */
export interface OwedStop {
	session: string;
	by: string;
	all: boolean;
	runs: string[];
}

export class Controls {
	readonly #requests = new Map<string, { press: Press; session: string; run?: string }>();
	/** By session: Stops sent (or pressed while the link was down) that no control-result has answered. */
	readonly #owed = new Map<string, OwedStop>();
	/** Whether a Stop is still waiting for its answer (it is cleared by one, however late). */
	stopPending = false;

	constructor(private readonly host: ControlsHost) {}

	/**
	 * Sends action to every session; returns how many requests went out. With `holdable`, the link is down
	 * and keeps its work: a Stop is owed for its return (Chat says the workflows pause when the machine
	 * reconnects) and a Resume is not held (Chat says so).
	 */
	press(action: ControlAction, by: string, sessions: readonly PlannerSession[], holdable = false): number {
		const press: Press = { action, by, waiting: new Set(), late: false, resent: false };
		for (const session of sessions) {
			if (action === "stop") this.#owed.set(session.id, { session: session.id, by, all: true, runs: [] });
			this.#send(press, session.id);
		}
		if (action === "stop") this.stopPending = press.waiting.size > 0;
		if (press.waiting.size === 0) {
			if (holdable && sessions.length > 0) {
				this.#notice(action === "stop" ? wording.stopHeld(by) : wording.resumeNotHeld(by));
			} else {
				this.#notice(action === "stop" ? wording.stopConfirmed(by) : wording.resumeConfirmed(by));
			}
			return 0;
		}
		this.#arm(press);
		return press.waiting.size;
	}

	/** control-result: one answer; the press's notice goes once all are in. */
	result(message: ControlResult): void {
		const sent = this.#requests.get(message.request);
		if (!sent) return;
		const { press } = sent;
		this.#requests.delete(message.request);
		press.waiting.delete(message.request);
		// Any answer, applied or refused, settles what it covered: a stop is not sent again.
		this.#settleOwed(sent.session, sent.run);
		if (!message.ok && press.refused === undefined) press.refused = message.message ?? "";
		if (press.waiting.size > 0) return;
		press.timer?.cancel();
		if (press.action === "stop") this.stopPending = false;
		const { action, by } = press;
		if (press.refused !== undefined) {
			const why = press.refused || undefined;
			this.#notice(action === "stop" ? wording.stopRefused(by, why) : wording.resumeRefused(by, why));
		} else if (press.late || press.resent) {
			this.#notice(action === "stop" ? wording.stopConfirmedLate() : wording.resumeConfirmedLate());
		} else {
			this.#notice(action === "stop" ? wording.stopConfirmed(by) : wording.resumeConfirmed(by));
		}
	}

	/** Stops owed to the sessions given (the ones a resume gave back), for the link's hand-over. */
	owed(sessions?: ReadonlySet<string>): OwedStop[] {
		return [...this.#owed.values()].filter((o) => !sessions || sessions.has(o.session));
	}

	/** Stops carried over from another process (a restart's hold), owed as if pressed here. */
	restoreOwed(stops: readonly OwedStop[]): void {
		for (const stop of stops) this.#owed.set(stop.session, { ...stop, runs: [...stop.runs] });
	}

	/** A session ended: nothing is owed to it any more. */
	forget(sessionId: string): void {
		this.#owed.delete(sessionId);
	}

	/**
	 * After resumed, before anything else: one stop per session owed one (or one per run named), however
	 * many times it was pressed. The answers post a notice once all are in.
	 */
	resendOwed(sessions: ReadonlySet<string>): void {
		const owed = this.owed(sessions);
		if (owed.length === 0) return;
		const press: Press = { action: "stop", by: owed[0]!.by, waiting: new Set(), late: false, resent: true };
		for (const stop of owed) {
			if (stop.all) this.#send(press, stop.session);
			else for (const run of stop.runs) this.#send(press, stop.session, run);
		}
		this.stopPending = press.waiting.size > 0;
		if (press.waiting.size > 0) this.#arm(press);
	}

	/**
	 * The link dropped and keeps its work: answers still awaited will never come on it. A Stop whose 10
	 * seconds had not passed is said to be held (Chat then says the workflows pause on reconnect); one
	 * already reported unconfirmed gets no more words. The Stops stay owed.
	 */
	dropped(): void {
		const presses = new Set([...this.#requests.values()].map((r) => r.press));
		this.#requests.clear();
		for (const press of presses) {
			press.timer?.cancel();
			if (press.late) continue;
			if (press.action === "stop") this.#notice(wording.stopHeld(press.by));
			else this.#notice(wording.resumeNotConfirmed(press.by));
		}
	}

	/** The link closed for good: nothing more will answer and nothing is owed. */
	closeAll(): void {
		for (const { press } of this.#requests.values()) press.timer?.cancel();
		this.#requests.clear();
		this.#owed.clear();
	}

	#send(press: Press, session: string, run?: string): void {
		const request = crypto.randomUUID();
		const action = press.action;
		if (this.host.send({ type: action, request, session, ...(run !== undefined && { run }) })) {
			press.waiting.add(request);
			this.#requests.set(request, { press, session, ...(run !== undefined && { run }) });
		}
	}

	#arm(press: Press): void {
		press.timer = this.host.clock.setTimeout(() => {
			if (press.waiting.size === 0) return;
			press.late = true;
			this.#notice(
				press.action === "stop" ? wording.stopNotConfirmed(press.by) : wording.resumeNotConfirmed(press.by),
			);
		}, ANSWER_WITHIN_MS);
	}

	/** An answered stop settles what it covered; an answered resume undoes a Stop only for the runs it covers. */
	#settleOwed(session: string, run: string | undefined): void {
		const owed = this.#owed.get(session);
		if (!owed) return;
		if (run === undefined) {
			this.#owed.delete(session);
			return;
		}
		// A Stop of every run stands for the other runs when only one is answered.
		if (owed.all) return;
		owed.runs = owed.runs.filter((r) => r !== run);
		if (owed.runs.length === 0) this.#owed.delete(session);
	}

	#notice(text: string): void {
		this.host.domain.chat
			.postNotice(this.host.documentId, text)
			.catch((error: unknown) => this.host.log.error("control notice not posted", { error }));
	}
}
