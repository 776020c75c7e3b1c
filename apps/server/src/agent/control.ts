// Stop Planner and Resume Planner from the document page: stop or resume to every session with a fresh request
// id, control-result within 10 seconds, and Chat notices saying whether the client confirmed it (a late answer
// still counts and clears the Stop).
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

/** One press of Stop or Resume: the requests it sent and how they were answered. */
interface Press {
	action: ControlAction;
	by: string;
	waiting: Set<string>;
	refused?: string;
	timer?: Timer;
	/** The 10 seconds passed with answers missing: Chat said so. */
	late: boolean;
}

export class Controls {
	readonly #requests = new Map<string, Press>();
	/** Whether a Stop is still waiting for its answer (it is cleared by one, however late). */
	stopPending = false;

	constructor(private readonly host: ControlsHost) {}

	/** Sends action to every session; returns how many requests went out. */
	press(action: ControlAction, by: string, sessions: readonly PlannerSession[]): number {
		const press: Press = { action, by, waiting: new Set(), late: false };
		for (const session of sessions) {
			const request = crypto.randomUUID();
			if (this.host.send({ type: action, request, session: session.id })) {
				press.waiting.add(request);
				this.#requests.set(request, press);
			}
		}
		if (action === "stop") this.stopPending = press.waiting.size > 0;
		if (press.waiting.size === 0) {
			this.#notice(action === "stop" ? wording.stopConfirmed(by) : wording.resumeConfirmed(by));
			return 0;
		}
		press.timer = this.host.clock.setTimeout(() => {
			if (press.waiting.size === 0) return;
			press.late = true;
			this.#notice(action === "stop" ? wording.stopNotConfirmed(by) : wording.resumeNotConfirmed(by));
		}, ANSWER_WITHIN_MS);
		return press.waiting.size;
	}

	/** control-result: one answer; the press's notice goes once all are in. */
	result(message: ControlResult): void {
		const press = this.#requests.get(message.request);
		if (!press) return;
		this.#requests.delete(message.request);
		press.waiting.delete(message.request);
		if (!message.ok && press.refused === undefined) press.refused = message.message ?? "";
		if (press.waiting.size > 0) return;
		press.timer?.cancel();
		if (press.action === "stop") this.stopPending = false;
		const { action, by } = press;
		if (press.refused !== undefined) {
			const why = press.refused || undefined;
			this.#notice(action === "stop" ? wording.stopRefused(by, why) : wording.resumeRefused(by, why));
		} else if (press.late) {
			this.#notice(action === "stop" ? wording.stopConfirmedLate() : wording.resumeConfirmedLate());
		} else {
			this.#notice(action === "stop" ? wording.stopConfirmed(by) : wording.resumeConfirmed(by));
		}
	}

	/** The link closed: nothing more will answer. */
	closeAll(): void {
		for (const press of new Set(this.#requests.values())) press.timer?.cancel();
		this.#requests.clear();
	}

	#notice(text: string): void {
		this.host.domain.chat
			.postNotice(this.host.documentId, text)
			.catch((error: unknown) => this.host.log.error("control notice not posted", { error }));
	}
}
