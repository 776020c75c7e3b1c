// An answer its client is never given (spec: After a server restart): a Decision the Planner asked that is answered
// when no link waits on its request any more (asked before a crash, or by a link that ended on a restart), or whose
// answer a dropped link never came back to resume. It reaches the Planner once, as an automatic follow-up turn of
// its own naming the question, what was chosen and who chose it, started once a Planner is attached and idle.
// Waiting answers are rows of answer_follow_ups, so a restart before the Planner attaches keeps them; a row is
// marked sent as its turn is taken, so no process sends it twice.
import type { Question } from "@chopin/agent-link";
import type { DecisionView } from "../decisions/decision-view";
import type { AttachedPlanner } from "./attached";
import type { AgentDeps } from "./deps";
import { invokeTurn } from "./invoke";

export interface OrphanHost {
	readonly deps: AgentDeps;
	/** The document's attached Planner, once it is confirmed (not waiting for its first message). */
	ready(documentId: string): AttachedPlanner | undefined;
	/** The Planner's state for pages changed (it is working now). */
	publish(documentId: string): void;
	track(work: Promise<void>): void;
}

export class OrphanAnswers {
	/** Documents with an answer waiting in answer_follow_ups (loaded at start-up, then kept as rows are added). */
	readonly #waiting = new Set<string>();
	/** Documents whose next follow-up is being taken now. */
	readonly #taking = new Set<string>();

	constructor(private readonly host: OrphanHost) {}

	/** After a restart: the documents whose answers the last process had not sent yet. */
	async load(): Promise<void> {
		const { store } = this.host.deps;
		const rows = await store.many(
			store.sql`SELECT DISTINCT document_id FROM answer_follow_ups WHERE sent_at IS NULL`,
		);
		for (const row of rows) this.#waiting.add(String(row.document_id));
	}

	/** An answered Decision nobody waits on: it goes to the Planner once, as soon as one can take it. */
	add(documentId: string, decisionId: string): void {
		const { store, clock, log } = this.host.deps;
		// Written first, so a restart before the Planner takes it keeps it; a second add changes nothing.
		const work = store.sql`INSERT INTO answer_follow_ups ${store.sql({
			decision_id: decisionId,
			document_id: documentId,
			created_at: clock.now(),
		})} ON CONFLICT (decision_id) DO NOTHING`.then(
			() => {
				this.#waiting.add(documentId);
				this.flush(documentId);
			},
			(error: unknown) => log.error("answer follow-up not kept", { error, decision: decisionId }),
		);
		this.host.track(work);
	}

	/** Starts the next follow-up when the document's Planner is attached and idle (called on every change). */
	flush(documentId: string): void {
		if (!this.#waiting.has(documentId) || this.#taking.has(documentId)) return;
		const planner = this.host.ready(documentId);
		if (!planner || planner.busy || planner.disconnected) return;
		// Reserved before the store is read, so no @chopin message takes the Planner meanwhile.
		planner.busy = true;
		this.#taking.add(documentId);
		this.host.publish(documentId);
		const work = (async () => {
			const decisionId = await this.#take(documentId);
			if (!decisionId) {
				planner.idle();
				return;
			}
			const decision = await this.host.deps.domain.decisions.get(decisionId);
			await invokeTurn(planner, {
				documentId,
				by: planner.login,
				asker: "a question answered while its Planner was away",
				system: true,
				message: describe(decision),
			});
		})()
			.catch((error: unknown) => {
				planner.idle();
				this.host.deps.log.error("answer follow-up not sent", { error, document: documentId });
			})
			.finally(() => {
				this.#taking.delete(documentId);
				this.flush(documentId);
			});
		this.host.track(work);
	}

	/** Marks the oldest waiting answer sent and returns it (once, whoever asks); none left forgets the document. */
	async #take(documentId: string): Promise<string | undefined> {
		const { store, clock } = this.host.deps;
		for (;;) {
			const next = await store.one(
				store.sql`SELECT decision_id FROM answer_follow_ups WHERE document_id = ${documentId}
					AND sent_at IS NULL ORDER BY created_at, decision_id LIMIT 1`,
			);
			if (!next) {
				this.#waiting.delete(documentId);
				return undefined;
			}
			const id = String(next.decision_id);
			const taken = await store.many(
				store.sql`UPDATE answer_follow_ups SET sent_at = ${clock.now()}
					WHERE decision_id = ${id} AND sent_at IS NULL RETURNING decision_id`,
			);
			if (taken.length === 1) return id;
		}
	}
}

/** The question, what was chosen and who chose it, in words the model reads. */
export function describe(decision: DecisionView): string {
	const asked = questionText(decision.question);
	const value = JSON.stringify(decision.result?.value ?? null);
	const by = decision.settledBy ?? decision.answers.at(-1)?.answeredBy ?? "a member";
	return `Your question "${asked}" was answered after the connection that asked it ended, so no request of yours waits on it. @${by} answered: ${value}`;
}

function questionText(question: Question): string {
	if (question.method === "questionnaire")
		return question.params.questions.map((q) => q.question).join(" / ");
	return question.title;
}
