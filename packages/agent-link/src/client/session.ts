/**
 * One Planner session the server started: its questions, its runs reports and its turns. A
 * session outlives a dropped resumable link: it is unbound, keeps its questions waiting, and is
 * bound again to the link that resumes it.
 */
import type { Question } from "../schemas/questions";
import type { InputResult, Turn as TurnMessage } from "../schemas/server-messages";
import { LinkError } from "./errors";
import {
	type AskedQuestion,
	type AskOptions,
	askOptionsSchema,
	localCancelled,
	type PendingQuestion,
	type QuestionResult,
} from "./questions";
import { planRunsReport, type RunsReport } from "./runs-report";
import { RunsSent } from "./runs-sent";
import { Turn } from "./turn";
import type { Wire } from "./wire";

export type SessionMode = "planner" | "isolated";

export class Session {
	readonly #controller = new AbortController();
	readonly #questions = new Map<string, PendingQuestion>();
	readonly #turns = new Map<string, Turn>();
	#wire: Wire | null;
	#ended = false;
	/** Frames the backend sent before the client answered started; they follow it. */
	#held: string[] | null = [];
	/** What the runs messages sent on this wire made Chopin store; a new wire (an attach) starts over. */
	#runsSent: { wire: Wire; sent: RunsSent } | undefined;

	constructor(
		readonly id: string,
		readonly mode: SessionMode,
		/** For a fork (session-forks): the session, and turn, it branches from. */
		readonly from: { session: string; turn?: string } | undefined,
		wire: Wire,
	) {
		this.#wire = wire;
	}

	/** Aborts when the session ends. */
	get signal(): AbortSignal {
		return this.#controller.signal;
	}

	get ended(): boolean {
		return this.#ended;
	}

	/** Whether a link carries the session now (false between a drop and its resume). */
	get connected(): boolean {
		return this.#wire !== null;
	}

	/** The request ids of the questions sent and still waited on. */
	get waiting(): string[] {
		return [...this.#questions.values()].filter((q) => q.sent).map((q) => q.request);
	}

	/** The turns running now. */
	get turns(): Turn[] {
		return [...this.#turns.values()];
	}

	/**
	 * Asks the document's members (input-request with a fresh UUID). Between a drop and its
	 * resume the question waits and is sent once the session is resumed.
	 */
	ask(input: Question, options: AskOptions = {}): AskedQuestion {
		if (this.#ended) throw sessionEnded();
		const { signal, ...fields } = options;
		const request = crypto.randomUUID();
		const pending: PendingQuestion = {
			request,
			input,
			options: askOptionsSchema.parse(fields),
			sent: false,
			settle: () => {},
		};
		const promise = new Promise<QuestionResult>((resolve) => {
			pending.settle = (result) => {
				if (this.#questions.get(request) !== pending) return;
				this.#questions.delete(request);
				signal?.removeEventListener("abort", onAbort);
				resolve(result);
			};
		});
		const onAbort = () => this.cancel(request);
		this.#questions.set(request, pending);
		const asked = Object.assign(promise, { request, cancel: () => this.cancel(request) });
		// Withdrawn before it was sent: settled here, and the server never hears of it.
		if (signal?.aborted) {
			this.cancel(request);
			return asked;
		}
		if (this.#wire) {
			try {
				this.#sendQuestion(this.#wire, pending);
			} catch (error) {
				this.#questions.delete(request);
				throw error;
			}
		}
		signal?.addEventListener("abort", onAbort, { once: true });
		return asked;
	}

	/** Withdraws a question: input-cancel when it was sent, and a local cancelled result at once. */
	cancel(request: string): boolean {
		const pending = this.#questions.get(request);
		if (!pending) return false;
		if (pending.sent && this.#wire) {
			try {
				this.#send(this.#wire, this.#wire.encode({ type: "input-cancel", request }));
			} catch {
				// A link that just ended withdraws the question anyway; a resume will not name it.
			}
		}
		pending.settle(localCancelled(request, "The question was withdrawn."));
		return true;
	}

	/**
	 * Reports the session's workflow runs: one runs message, or several in a row when it needs
	 * more than a frame (run-stage-deltas), or full cards with the 64 most recent stages without
	 * it. With run-stage-deltas each stage goes once after each attach, then only what changes.
	 * Returns how many messages were sent: 0 while no link carries the session (report again
	 * after the resume).
	 */
	reportRuns(report: RunsReport): number {
		if (this.#ended) throw sessionEnded();
		const wire = this.#wire;
		if (!wire) return 0;
		if (this.#runsSent?.wire !== wire) this.#runsSent = { wire, sent: new RunsSent() };
		const { sent } = this.#runsSent;
		const messages = planRunsReport(this.id, report, wire.features.has("run-stage-deltas"), sent);
		const frames = messages.map((message) => wire.encode(message));
		try {
			for (const frame of frames) this.#send(wire, frame);
		} catch (error) {
			// Not all of it went out: the next report sends every stage again.
			this.#runsSent = undefined;
			throw error;
		}
		sent.record(messages);
		return frames.length;
	}

	#sendQuestion(wire: Wire, pending: PendingQuestion): void {
		this.#send(
			wire,
			wire.encode({
				type: "input-request",
				request: pending.request,
				session: this.id,
				...pending.options,
				input: pending.input,
			}),
		);
		pending.sent = true;
	}

	#send(wire: Wire, text: string): void {
		if (this.#held) this.#held.push(text);
		else wire.sendText(text);
	}

	/** @internal started went out: what the backend sent meanwhile follows it. */
	started(): void {
		const held = this.#held ?? [];
		this.#held = null;
		try {
			for (const text of held) this.#wire?.sendText(text);
		} catch {
			// The link ended meanwhile; what it kept is resumed or ended by that.
		}
	}

	/** @internal start-failed went out: the server will destroy the session, so nothing held is sent. */
	startFailed(): void {
		this.#held = null;
	}

	/** @internal A turn message for this session. */
	openTurn(message: TurnMessage): Turn {
		const wire = this.#wire;
		if (!wire) throw sessionEnded();
		const turn = new Turn(this, message, wire, () => this.#turns.delete(message.turn));
		this.#turns.set(message.turn, turn);
		return turn;
	}

	/** @internal */
	turn(id: string): Turn | undefined {
		return this.#turns.get(id);
	}

	/** @internal An input-result: settles the question it answers; false for one already settled. */
	settleQuestion(result: InputResult): boolean {
		const pending = this.#questions.get(result.request);
		if (!pending) return false;
		pending.settle(result);
		return true;
	}

	/** @internal The link dropped and keeps the session: its turns end, its questions wait. */
	unbind(reason: string): void {
		this.#wire = null;
		for (const turn of this.#turns.values()) turn.abandon(reason);
	}

	/**
	 * @internal A link resumed the session: settle what it no longer holds, then send the
	 * questions asked while no link carried them.
	 */
	bind(wire: Wire, held: ReadonlySet<string>): void {
		this.#wire = wire;
		this.#held = null;
		for (const pending of [...this.#questions.values()]) {
			if (pending.sent && !held.has(pending.request)) {
				pending.settle(localCancelled(pending.request, "Chopin no longer holds this question."));
			}
		}
		for (const pending of [...this.#questions.values()]) {
			if (!pending.sent) this.#sendQuestion(wire, pending);
		}
	}

	/** @internal Ends the session; false when it had already ended. */
	end(reason: string): boolean {
		if (this.#ended) return false;
		this.#ended = true;
		this.#wire = null;
		this.#controller.abort(new LinkError("session-ended", reason));
		for (const turn of [...this.#turns.values()]) turn.abandon(reason);
		for (const pending of [...this.#questions.values()])
			pending.settle(localCancelled(pending.request, reason));
		return true;
	}
}

function sessionEnded(): LinkError {
	return new LinkError(
		"session-ended",
		"This session has ended.",
		"Start work only in sessions the server started.",
	);
}
