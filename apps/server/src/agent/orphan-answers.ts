// An answer its client is never given (spec: After a server restart): a Decision the Planner asked that is answered
// when no link waits on its request any more (asked before a crash, or by a link that ended on a restart), or whose
// answer a dropped link never came back to resume. It reaches the Planner once, as an automatic follow-up turn of
// its own naming the question, what was chosen and who chose it, started once a Planner is attached and idle.
// Pending answers live in this process's memory: a restart before the Planner attaches forgets them.
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
	/** Per document: Decision ids whose answers wait for a Planner, oldest first; each is sent once. */
	readonly #pending = new Map<string, string[]>();
	readonly #sent = new Set<string>();

	constructor(private readonly host: OrphanHost) {}

	/** An answered Decision nobody waits on: it goes to the Planner once, as soon as one can take it. */
	add(documentId: string, decisionId: string): void {
		if (this.#sent.has(decisionId)) return;
		const list = this.#pending.get(documentId) ?? [];
		if (list.includes(decisionId)) return;
		list.push(decisionId);
		this.#pending.set(documentId, list);
		this.flush(documentId);
	}

	/** Starts the next follow-up when the document's Planner is attached and idle (called on every change). */
	flush(documentId: string): void {
		const list = this.#pending.get(documentId);
		const planner = this.host.ready(documentId);
		if (!list?.length || !planner || planner.busy || planner.disconnected) return;
		const decisionId = list.shift()!;
		if (list.length === 0) this.#pending.delete(documentId);
		this.#sent.add(decisionId);
		planner.busy = true;
		this.host.publish(documentId);
		const work = (async () => {
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
				this.host.deps.log.error("answer follow-up not sent", { error, decision: decisionId });
			})
			.finally(() => this.flush(documentId));
		this.host.track(work);
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
