/**
 * What a dropped resumable link leaves its caller: the sessions it held, to pass to the next
 * connectAgent as resume. It is the same Session objects, so questions asked on the old link
 * settle when their answers arrive on the new one. One connection uses it at a time, and once
 * resumed or ended for good it cannot be used again.
 */
import type { ResumeSession } from "../schemas/resume";
import { LinkError } from "./errors";
import type { Session } from "./session";

type State = "held" | "connecting" | "done";

export class LinkResume {
	readonly #sessions: Map<string, Session>;
	#state: State = "held";

	constructor(sessions: Iterable<Session>) {
		this.#sessions = new Map([...sessions].map((session) => [session.id, session]));
	}

	/** The resume message's sessions: each session still held, with the request ids it waits on. */
	get sessions(): ResumeSession[] {
		return [...this.#sessions.values()]
			.filter((session) => !session.ended)
			.map((session) => ({ session: session.id, requests: session.waiting }));
	}

	/** Whether it can still be passed to connectAgent. */
	get usable(): boolean {
		return this.#state === "held";
	}

	toJSON(): { sessions: ResumeSession[] } {
		return { sessions: this.sessions };
	}

	/** @internal A connection starts using it. */
	take(): Map<string, Session> {
		if (this.#state !== "held") {
			throw new LinkError(
				"resume-unavailable",
				this.#state === "done"
					? "This resume was already used or has ended."
					: "Another connection is using this resume.",
				"Pass the resume of the latest link's closed, once at a time.",
			);
		}
		this.#state = "connecting";
		return new Map([...this.#sessions].filter(([, session]) => !session.ended));
	}

	/** @internal The attempt failed in a way worth retrying: the caller may pass it again. */
	release(): void {
		if (this.#state === "connecting") this.#state = "held";
	}

	/** @internal Resumed, or ended for good. */
	finish(): void {
		this.#state = "done";
	}
}
