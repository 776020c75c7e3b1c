// Questions: an input-request becomes Decisions in the document (placed after the block it names), members
// answer them on the page, and the settled result goes back as input-result; option previews kept only with
// decision-option-previews (else folded into the description); 16 open per connection, none in isolated
// sessions, answers held while the question's root run is paused, everything withdrawn on close.
import {
	type InputRequest,
	type InputResult,
	OPEN_REQUESTS_MAX,
	type Question,
	type ServerMessage,
} from "@chopin/agent-link";
import type { DecisionResult } from "../decisions/decision-view";
import type { Settlement } from "../decisions/service";
import type { Domain } from "../domain";
import type { Logger } from "../log";
import type { RememberedIds } from "./request-ids";
import type { PlannerSession } from "./sessions";
import { wording } from "./wording";

export interface QuestionsHost {
	readonly documentId: string;
	readonly domain: Domain;
	readonly log: Logger;
	readonly requestIds: RememberedIds;
	send(message: ServerMessage): boolean;
	/** Whether the session's latest runs report lists this root run as paused. */
	rootPaused(session: PlannerSession, root: string): boolean;
	/** A question settled or was withdrawn: its session may now be idle. */
	questionEnded(session: PlannerSession): void;
	/** Whether the link negotiated decision-option-previews: options keep their previews as their own field. */
	keepsPreviews(): boolean;
}

interface OpenQuestion {
	request: InputRequest;
	session: PlannerSession;
	/** The Decision's id once made; null when it could not be made. */
	decision: Promise<string | null>;
	decisionId?: string;
	/** An answer waiting for its root run to be resumed. */
	held?: DecisionResult;
}

export class Questions {
	readonly #open = new Map<string, OpenQuestion>();
	#closed = false;

	constructor(private readonly host: QuestionsHost) {}

	/** Open questions of a session. */
	openIn(session: PlannerSession): number {
		let n = 0;
		for (const q of this.#open.values()) if (q.session === session) n++;
		return n;
	}

	get openCount(): number {
		return this.#open.size;
	}

	/** input-request on a live session (its id is remembered already). */
	request(message: InputRequest, session: PlannerSession): void {
		if (session.mode === "isolated") {
			this.#failed(message.request, wording.isolatedQuestion());
			return;
		}
		if (this.#open.size >= OPEN_REQUESTS_MAX) {
			this.#failed(message.request, wording.tooManyQuestions(OPEN_REQUESTS_MAX));
			return;
		}
		const { type: _type, input, ...rest } = message;
		const entry: OpenQuestion = {
			request: message,
			session,
			decision: this.host.domain.decisions
				.create(this.host.documentId, {
					...rest,
					input: this.host.keepsPreviews() ? input : foldPreviews(input),
				})
				.then((decision) => {
					entry.decisionId = decision.id;
					// Closed while it was being made: withdraw it at once.
					if (this.#closed) void this.#withdraw(decision.id);
					return decision.id;
				})
				.catch((error: unknown) => {
					this.#open.delete(message.request);
					this.#failed(message.request, wording.questionNotAsked((error as Error).message));
					this.host.questionEnded(session);
					return null;
				}),
		};
		this.#open.set(message.request, entry);
	}

	/** input-cancel: the Decision is withdrawn and the request answered cancelled. */
	cancel(requestId: string): void {
		const entry = this.#open.get(requestId);
		if (!entry) return;
		if (entry.held) {
			// Its answer came while the root run was paused; the client withdrew it meanwhile: send what it got.
			this.#deliver(entry, entry.held);
			return;
		}
		void entry.decision.then((id) => (id ? this.#withdraw(id) : undefined));
	}

	/** A Decision settled (answered, cancelled by a member, or withdrawn): send its result, or hold it. */
	settled(settlement: Settlement): boolean {
		const requestId = settlement.requestId;
		if (!requestId) return false;
		const entry = this.#open.get(requestId);
		// The Decision of this link's request (another link may reuse a request id for its own).
		if (!entry || entry.decisionId !== settlement.decision.id) return false;
		const root = entry.request.rootRunId ?? entry.request.workflowRunId;
		if (settlement.result.status === "answered" && root && this.host.rootPaused(entry.session, root)) {
			entry.held = settlement.result;
			return true;
		}
		this.#deliver(entry, settlement.result);
		return true;
	}

	/** After a runs report: answers whose root run is no longer paused go out. */
	releaseHeld(session: PlannerSession): void {
		for (const entry of [...this.#open.values()]) {
			if (entry.session !== session || !entry.held) continue;
			const root = entry.request.rootRunId ?? entry.request.workflowRunId;
			if (!root || !this.host.rootPaused(session, root)) this.#deliver(entry, entry.held);
		}
	}

	/** The session ended: its questions are withdrawn (and answered cancelled while the link is open). */
	async endSession(session: PlannerSession): Promise<void> {
		const entries = [...this.#open.values()].filter((e) => e.session === session);
		await Promise.all(entries.map((e) => this.#withdrawEntry(e)));
	}

	/** The link closed: every open question and its Decision is withdrawn; nothing more is sent. */
	async closeAll(): Promise<void> {
		this.#closed = true;
		const entries = [...this.#open.values()];
		await Promise.all(entries.map((e) => this.#withdrawEntry(e)));
		this.#open.clear();
	}

	async #withdrawEntry(entry: OpenQuestion): Promise<void> {
		if (entry.held) {
			// Answered already: the Decision is settled; only the held result is dropped.
			this.#open.delete(entry.request.request);
			return;
		}
		const id = await entry.decision;
		if (id) await this.#withdraw(id);
	}

	async #withdraw(decisionId: string): Promise<void> {
		try {
			await this.host.domain.decisions.withdraw(decisionId);
		} catch (error) {
			this.host.log.error("withdrawing a decision failed", { error, decision: decisionId });
		}
	}

	#deliver(entry: OpenQuestion, result: DecisionResult): void {
		this.#open.delete(entry.request.request);
		this.host.requestIds.settle(entry.request.request);
		if (!this.#closed) {
			const message: InputResult = {
				type: "input-result",
				request: entry.request.request,
				status: result.status,
				value: result.value,
			};
			try {
				this.host.send(message);
			} catch (error) {
				this.host.log.error("input-result not sent", { error, request: entry.request.request });
			}
		}
		this.host.questionEnded(entry.session);
	}

	#failed(requestId: string, message: string): void {
		this.host.requestIds.settle(requestId);
		if (this.#closed) return;
		this.host.send({ type: "input-result", request: requestId, status: "failed", message });
	}
}

/**
 * Without decision-option-previews, an option's preview is joined onto the end of its description
 * (spec: Option previews), cut to the description's 4,000 characters.
 */
export function foldPreviews(question: Question): Question {
	if (question.method !== "questionnaire") return question;
	return {
		...question,
		params: {
			questions: question.params.questions.map((q) => ({
				...q,
				options: q.options.map(({ preview, ...option }) => {
					if (!preview) return option;
					const joined = option.description ? `${option.description}\n\n${preview}` : preview;
					const points = [...joined];
					return {
						...option,
						description: points.length <= 4000 ? joined : `${points.slice(0, 3999).join("")}…`,
					};
				}),
			})),
		},
	};
}
