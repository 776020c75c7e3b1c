// Questions: an input-request becomes Decisions in the document (placed after the block it names), members
// answer them on the page, and the settled result goes back as input-result; option previews kept only with
// decision-option-previews (else folded into the description); 16 open per connection, none in isolated
// sessions, answers held while the question's root run is paused, everything withdrawn on close.
// With resumable-sessions a result is kept until the client acknowledges it with input-received, across a
// dropped link, and sent again after the client resumes (spec: Resuming after a dropped link).
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
	/** The current link's remembered ids. */
	readonly requestIds: RememberedIds;
	/** Whether the link offered resumable-sessions: results then wait for input-received. */
	readonly resumable: boolean;
	send(message: ServerMessage): boolean;
	/** Whether the session's latest runs report lists this root run as paused. */
	rootPaused(session: PlannerSession, root: string): boolean;
	/** A question settled or was withdrawn: its session may now be idle. */
	questionEnded(session: PlannerSession): void;
	/** Whether the link negotiated decision-option-previews: options keep their previews as their own field. */
	keepsPreviews(): boolean;
}

/** What a question needs of its input-request once asked (a restored one has only these). */
type Asked = Pick<InputRequest, "request" | "rootRunId" | "workflowRunId">;

interface OpenQuestion {
	request: Asked;
	session: PlannerSession;
	/** The Decision's id once made; null when it could not be made. */
	decision: Promise<string | null>;
	decisionId?: string;
	/** An answer waiting for its root run to be resumed. */
	held?: DecisionResult;
}

/** A result sent (or to send) that the client has not acknowledged yet. */
interface Unacknowledged {
	message: InputResult;
	session: PlannerSession;
	decisionId?: string;
}

export class Questions {
	readonly #open = new Map<string, OpenQuestion>();
	/** By request id, in the order they settled: what to send again after a resume. */
	readonly #unacked = new Map<string, Unacknowledged>();
	#closed = false;

	constructor(private readonly host: QuestionsHost) {}

	/** Questions a session still holds: open ones, and answered ones the client has not acknowledged. */
	openIn(session: PlannerSession): number {
		return this.requestsOf(session).length;
	}

	/** The request ids a session holds, open or answered and not acknowledged (resumed lists them). */
	requestsOf(session: PlannerSession): string[] {
		const ids: string[] = [];
		for (const [id, q] of this.#open) if (q.session === session) ids.push(id);
		for (const [id, u] of this.#unacked) if (u.session === session) ids.push(id);
		return ids;
	}

	/** input-received: the client has the result; nothing more is kept for it. Unknown ids are ignored. */
	received(requestId: string): void {
		const entry = this.#unacked.get(requestId);
		if (!entry) return;
		this.#unacked.delete(requestId);
		this.host.questionEnded(entry.session);
	}

	/**
	 * A resumed session: of what it holds, the requests the client named come back (their ids are returned);
	 * an open one it did not name is withdrawn as input-cancel withdraws it, and an answer it did not name
	 * is one it has already (its acknowledgement was lost with the link).
	 */
	resumeSession(session: PlannerSession, named: ReadonlySet<string>): string[] {
		for (const [id, entry] of [...this.#unacked]) {
			if (entry.session !== session || named.has(id)) continue;
			this.#unacked.delete(id);
		}
		for (const [id, entry] of [...this.#open]) {
			if (entry.session !== session || named.has(id)) continue;
			// Nobody waits on it: withdrawn, with no result sent for it.
			this.#open.delete(id);
			if (!entry.held)
				void entry.decision.then((decisionId) => (decisionId ? this.#withdraw(decisionId) : undefined));
		}
		return this.requestsOf(session).filter((id) => named.has(id));
	}

	/**
	 * What a restart carries over for the session: each question whose Decision exists, open or answered and
	 * not acknowledged (one still being made is not kept: its answer goes to the Planner as a turn of its own).
	 */
	record(session: PlannerSession): { request: string; decisionId: string; rootRunId?: string }[] {
		const out: { request: string; decisionId: string; rootRunId?: string }[] = [];
		for (const [request, q] of this.#open) {
			if (q.session !== session || !q.decisionId) continue;
			const root = q.request.rootRunId ?? q.request.workflowRunId;
			out.push({ request, decisionId: q.decisionId, ...(root && { rootRunId: root }) });
		}
		for (const [request, u] of this.#unacked) {
			if (u.session === session && u.decisionId) out.push({ request, decisionId: u.decisionId });
		}
		return out;
	}

	/**
	 * A question carried over by a restart: still open (its Decision's answer goes to the client's request),
	 * or settled meanwhile (its result is delivered once after resumed). A workflow run's pause is not carried
	 * over, so no answer is held for it.
	 */
	restore(
		session: PlannerSession,
		asked: { request: string; decisionId: string },
		result: DecisionResult | null,
	): void {
		if (result) {
			const message: InputResult = {
				type: "input-result",
				request: asked.request,
				status: result.status,
				value: result.value,
			};
			this.#unacked.set(asked.request, { message, session, decisionId: asked.decisionId });
			return;
		}
		this.#open.set(asked.request, {
			request: { request: asked.request },
			session,
			decision: Promise.resolve(asked.decisionId),
			decisionId: asked.decisionId,
		});
	}

	/** The Decisions of answers not acknowledged (of one session, or all): what a client never came back for. */
	unackedAnswers(session?: PlannerSession): string[] {
		const ids: string[] = [];
		for (const u of this.#unacked.values()) {
			if (session && u.session !== session) continue;
			if (u.message.status === "answered" && u.decisionId) ids.push(u.decisionId);
		}
		return ids;
	}

	/** Whether a Decision is one of these questions' (open or answered and not acknowledged). */
	holdsDecision(decisionId: string): boolean {
		for (const q of this.#open.values()) if (q.decisionId === decisionId) return true;
		for (const u of this.#unacked.values()) if (u.decisionId === decisionId) return true;
		return false;
	}

	/** After resumed: every unacknowledged result of the session, sent again in the order they settled. */
	redeliver(session: PlannerSession): void {
		for (const entry of this.#unacked.values()) {
			if (entry.session === session) this.#send(entry.message);
		}
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
		for (const [id, entry] of [...this.#unacked]) if (entry.session === session) this.#unacked.delete(id);
		const entries = [...this.#open.values()].filter((e) => e.session === session);
		await Promise.all(entries.map((e) => this.#withdrawEntry(e)));
	}

	/** The link closed: every open question and its Decision is withdrawn; nothing more is sent. */
	async closeAll(): Promise<void> {
		this.#closed = true;
		this.#unacked.clear();
		const entries = [...this.#open.values()];
		await Promise.all(entries.map((e) => this.#withdrawEntry(e)));
		this.#open.clear();
	}

	/** The server is stopping and hands over: nothing is withdrawn or sent; the Decisions stay open. */
	forget(): void {
		this.#closed = true;
		this.#open.clear();
		this.#unacked.clear();
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
		if (this.#closed) {
			this.host.questionEnded(entry.session);
			return;
		}
		const message: InputResult = {
			type: "input-result",
			request: entry.request.request,
			status: result.status,
			value: result.value,
		};
		// Kept until acknowledged: a result written into a socket that died unnoticed reaches nobody.
		if (this.host.resumable) {
			const { decisionId } = entry;
			this.#unacked.set(message.request, {
				message,
				session: entry.session,
				...(decisionId && { decisionId }),
			});
		}
		this.#send(message);
		if (!this.host.resumable) this.host.questionEnded(entry.session);
	}

	#send(message: InputResult): void {
		try {
			this.host.send(message);
		} catch (error) {
			this.host.log.error("input-result not sent", { error, request: message.request });
		}
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
