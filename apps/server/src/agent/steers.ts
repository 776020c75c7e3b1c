// steer (steer-turn): a person's @chopin message handed to the turn running now, its control-result within 10
// seconds, and the Chat notice when it was not read (a refusal, no answer in time, the link closing).
import type { ControlResult } from "@chopin/agent-link";
import type { Timer } from "@chopin/agent-link/clock";
import type { ControlsHost } from "./control";
import { ANSWER_WITHIN_MS } from "./deps";
import type { PlannerTurn } from "./turns";
import { wording } from "./wording";

/** A steer sent and not answered yet. */
interface Pending {
	author: string;
	timer?: Timer;
	/** The 10 seconds passed: Chat said it may not have been read. */
	late: boolean;
}

export class Steers {
	readonly #requests = new Map<string, Pending>();

	constructor(private readonly host: ControlsHost) {}

	/**
	 * Sends steer for the running turn: prompt is the message as the model reads it (`@bo: ...`). A steer the
	 * link cannot take is said in Chat at once, like a refusal.
	 */
	send(turn: PlannerTurn, author: string, prompt: string): void {
		const request = crypto.randomUUID();
		const sent = this.host.send({ type: "steer", request, session: turn.session.id, turn: turn.id, prompt });
		if (!sent) {
			this.#notice(wording.steerClosed(author));
			return;
		}
		const pending: Pending = { author, late: false };
		this.#requests.set(request, pending);
		pending.timer = this.host.clock.setTimeout(() => {
			pending.late = true;
			this.#notice(wording.steerNotConfirmed(author));
		}, ANSWER_WITHIN_MS);
	}

	/** control-result for a steer; false when the request is not one (a stop's or resume's, or unknown). */
	result(message: ControlResult): boolean {
		const pending = this.#requests.get(message.request);
		if (!pending) return false;
		this.#requests.delete(message.request);
		pending.timer?.cancel();
		const { author } = pending;
		if (message.ok) {
			// Read in time: Chat already shows the message, and the reply goes on with it. Late: say so now.
			if (pending.late) this.#notice(wording.steerReadLate(author));
		} else if (!pending.late) {
			// A refusal is final: the message is not sent again.
			this.#notice(wording.steerRefused(author, message.message || undefined));
		}
		return true;
	}

	/** The link closed: steers not answered yet will never be, so Chat says they may not have been read. */
	closeAll(): void {
		for (const pending of this.#requests.values()) {
			pending.timer?.cancel();
			if (!pending.late) this.#notice(wording.steerClosed(pending.author));
		}
		this.#requests.clear();
	}

	#notice(text: string): void {
		this.host.domain.chat
			.postNotice(this.host.documentId, text)
			.catch((error: unknown) => this.host.log.error("steer notice not posted", { error }));
	}
}
