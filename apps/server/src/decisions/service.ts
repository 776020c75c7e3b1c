// Decisions: a Planner's question call as cards in its document, answered or cancelled by members or
// withdrawn, settling exactly once with the input-result the agent endpoint sends (see docs/decisions.md).
import { inputRequestSchema } from "@chopin/agent-link";
import type { z } from "zod";
import { splitBlocks } from "../documents/blocks";
import { readDocumentState } from "../documents/document-state";
import type { DomainDeps } from "../domain-deps";
import { randomId } from "../ids";
import { isUniqueViolation } from "../store/errors";
import type { Db, Tx } from "../store/store";
import {
	buildResult,
	DecisionError,
	memberAnswerSchema,
	questionCount,
	type Settling,
	toStoredAnswer,
} from "./answers";
import { answerRow, type DecisionRow, decisionRow, decisionViews } from "./decision-rows";
import type { DecisionResult, DecisionView, SettledReason, StoredAnswer } from "./decision-view";
import { placeQuestion } from "./placement";

/** An input-request without its type; request and session are absent for a question asked in-process. */
export const decisionRequestSchema = inputRequestSchema
	.omit({ type: true })
	.partial({ request: true, session: true });
export type DecisionRequest = z.infer<typeof decisionRequestSchema>;

/** A decision that settled: the agent endpoint sends `result` as the request's input-result. */
export interface Settlement {
	decision: DecisionView;
	requestId: string | null;
	session: string | null;
	result: DecisionResult;
}

const notFound = (id: string) =>
	new DecisionError("decision-not-found", `No decision ${id} exists.`, undefined, 404);

export class DecisionService {
	readonly #settledListeners = new Set<(settlement: Settlement) => void>();

	constructor(private readonly deps: DomainDeps) {}

	/** Calls listener after every decision settles (once each), after its change is committed. */
	onSettled(listener: (settlement: Settlement) => void): () => void {
		const entry = (s: Settlement) => listener(s);
		this.#settledListeners.add(entry);
		return () => {
			this.#settledListeners.delete(entry);
		};
	}

	/** Makes a question call the document's Decision, placed after the block it names when that still holds. */
	async create(documentId: string, request: unknown): Promise<DecisionView> {
		const parsed = decisionRequestSchema.safeParse(request);
		if (!parsed.success) {
			const issue = parsed.error.issues[0]!;
			throw new DecisionError(
				"invalid-question",
				`The question is not valid: ${issue.path.join(".") || "input"}: ${issue.message}.`,
				"Ask with one of the five question methods, as the agent connection spec describes them.",
			);
		}
		const ask = parsed.data;
		const now = this.deps.clock.now();
		for (let attempt = 1; ; attempt++) {
			try {
				const view = await this.deps.store.transaction(async (tx) => {
					const source = await this.#openDocumentSource(tx, documentId);
					if (ask.request !== undefined) {
						const open = await tx.one(
							tx.sql`SELECT id FROM decisions WHERE document_id = ${documentId} AND request_id = ${ask.request} AND status = 'open'`,
						);
						if (open) {
							throw new DecisionError(
								"request-open",
								`Request ${ask.request} already has an open decision in this document.`,
								"Use a fresh request id for every question.",
								409,
							);
						}
					}
					const placement = placeQuestion(splitBlocks(source), ask.block);
					const next = await tx.one(
						tx.sql`SELECT coalesce(max(seq), 0) + 1 AS seq FROM decisions WHERE document_id = ${documentId}`,
					);
					const id = randomId();
					await tx.sql`INSERT INTO decisions ${tx.sql({
						id,
						document_id: documentId,
						seq: Number(next?.seq ?? 1),
						request_id: ask.request ?? null,
						session: ask.session ?? null,
						workflow_run_id: ask.workflowRunId ?? null,
						workflow_stage_id: ask.workflowStageId ?? null,
						root_run_id: ask.rootRunId ?? null,
						method: ask.input.method,
						input: JSON.stringify(ask.input),
						block_index: placement.link?.index ?? null,
						block_digest: placement.link?.digest ?? null,
						unlinked_reason: placement.unlinkedReason,
						status: "open",
						created_at: now,
						version: 0,
					})}`;
					return (await this.#views(tx, tx.sql`SELECT * FROM decisions WHERE id = ${id}`))[0]!;
				});
				this.deps.hub.publish(documentId, { type: "decision.created", documentId, decision: view });
				return view;
			} catch (error) {
				if (attempt < 5 && isUniqueViolation(error)) continue;
				throw error;
			}
		}
	}

	async get(id: string): Promise<DecisionView> {
		const [view] = await this.#views(
			this.deps.store,
			this.deps.store.sql`SELECT * FROM decisions WHERE id = ${id}`,
		);
		if (!view) throw notFound(id);
		return view;
	}

	/** The document's decisions in the order asked; only the open ones unless `all`. */
	list(documentId: string, options: { all?: boolean } = {}): Promise<DecisionView[]> {
		const { store } = this.deps;
		return this.#views(
			store,
			options.all
				? store.sql`SELECT * FROM decisions WHERE document_id = ${documentId} ORDER BY seq`
				: store.sql`SELECT * FROM decisions WHERE document_id = ${documentId} AND status = 'open' ORDER BY seq`,
		);
	}

	/** The open decisions of a document, or of one session of it (the endpoint allows 16 per connection). */
	listOpen(documentId: string, options: { session?: string } = {}): Promise<DecisionView[]> {
		const { store } = this.deps;
		if (options.session === undefined) return this.list(documentId);
		return this.#views(
			store,
			store.sql`SELECT * FROM decisions WHERE document_id = ${documentId} AND session = ${options.session}
				AND status = 'open' ORDER BY seq`,
		);
	}

	async countOpen(documentId: string, options: { session?: string } = {}): Promise<number> {
		const { store } = this.deps;
		const row =
			options.session === undefined
				? await store.one(
						store.sql`SELECT count(*) AS n FROM decisions WHERE document_id = ${documentId} AND status = 'open'`,
					)
				: await store.one(
						store.sql`SELECT count(*) AS n FROM decisions WHERE document_id = ${documentId}
							AND session = ${options.session} AND status = 'open'`,
					);
		return Number(row?.n ?? 0);
	}

	/** The newest decision asked with this request id in the document, if any. */
	async findByRequest(documentId: string, requestId: string): Promise<DecisionView | undefined> {
		const { store } = this.deps;
		const [view] = await this.#views(
			store,
			store.sql`SELECT * FROM decisions WHERE document_id = ${documentId} AND request_id = ${requestId}
				ORDER BY seq DESC LIMIT 1`,
		);
		return view;
	}

	/**
	 * A member's answer to one question (index 0 for the methods with one). When it is the last
	 * question answered, the decision settles `answered`. Answers race safely: each takes the
	 * decision's row first, so a question is answered once and the decision settles once.
	 */
	async answer(
		decisionId: string,
		input: { questionIndex?: number; answer: unknown; by: string },
	): Promise<DecisionView> {
		const parsed = memberAnswerSchema.safeParse(input.answer);
		if (!parsed.success) {
			throw new DecisionError(
				"invalid-answer",
				`The answer is not valid: ${parsed.error.issues[0]!.message}.`,
			);
		}
		const questionIndex = input.questionIndex ?? 0;
		return this.#change(decisionId, async (tx, row, answers) => {
			if (answers.has(questionIndex)) throw answered(questionIndex);
			const stored = toStoredAnswer(row.input, questionIndex, parsed.data);
			const now = this.deps.clock.now();
			await tx.sql`INSERT INTO decision_answers ${tx.sql({
				decision_id: decisionId,
				question_index: questionIndex,
				kind: stored.kind,
				answer: JSON.stringify(stored),
				answered_by: input.by,
				answered_at: now,
			})}`;
			answers.set(questionIndex, stored);
			if (answers.size < questionCount(row.input)) return null;
			return { settling: "answered", reason: "answered", by: input.by };
		});
	}

	/**
	 * A member cancels a question (index 0 for the methods with one): the decision settles
	 * `cancelled`, and a questionnaire's result keeps the questions others answered.
	 */
	async cancelQuestion(
		decisionId: string,
		input: { questionIndex?: number; by: string },
	): Promise<DecisionView> {
		const questionIndex = input.questionIndex ?? 0;
		return this.#change(decisionId, async (_tx, row, answers) => {
			const count = questionCount(row.input);
			if (!Number.isInteger(questionIndex) || questionIndex < 0 || questionIndex >= count) {
				throw new DecisionError(
					"invalid-answer",
					`There is no question ${questionIndex}: this one has ${count}.`,
				);
			}
			if (answers.has(questionIndex)) throw answered(questionIndex);
			return { settling: "cancelled", reason: "cancelled-by-member", by: input.by };
		});
	}

	/**
	 * The asker withdraws the decision (input-cancel, its session or link ended, a Stop): it settles
	 * `cancelled` with no answers. Null when it had already settled: withdrawing is idempotent.
	 */
	async withdraw(decisionId: string): Promise<DecisionView | null> {
		try {
			return await this.#change(decisionId, async () => ({
				settling: "withdrawn",
				reason: "withdrawn",
				by: null,
			}));
		} catch (error) {
			if (error instanceof DecisionError && error.code === "decision-settled") return null;
			throw error;
		}
	}

	/** Withdraws the open decision of a request, if any. */
	async withdrawRequest(documentId: string, requestId: string): Promise<DecisionView | null> {
		const open = await this.deps.store.many(
			this.deps.store
				.sql`SELECT id FROM decisions WHERE document_id = ${documentId} AND request_id = ${requestId} AND status = 'open'`,
		);
		const settled = await Promise.all(open.map((r) => this.withdraw(String(r.id))));
		return settled.find((v) => v !== null) ?? null;
	}

	/** Withdraws every open decision of a session (its link closed), or of the document when no session is named. */
	async withdrawOpen(documentId: string, options: { session?: string } = {}): Promise<DecisionView[]> {
		const open = await this.listOpen(documentId, options);
		const settled: DecisionView[] = [];
		for (const decision of open) {
			const view = await this.withdraw(decision.id);
			if (view) settled.push(view);
		}
		return settled;
	}

	/**
	 * Changes an open decision: the row is taken first (its version bumped), so concurrent changes
	 * take turns and see each other's answers; `change` returns how it settles, or null to stay open.
	 */
	async #change(
		decisionId: string,
		change: (
			tx: Tx,
			row: DecisionRow,
			answers: Map<number, StoredAnswer>,
		) => Promise<{ settling: Settling; reason: SettledReason; by: string | null } | null>,
	): Promise<DecisionView> {
		let settled: DecisionResult | undefined;
		const view = await this.deps.store.transaction(async (tx) => {
			const row = await tx.one(
				tx.sql`UPDATE decisions SET version = version + 1 WHERE id = ${decisionId} AND status = 'open' RETURNING *`,
				decisionRow,
			);
			if (!row) {
				const exists = await tx.one(tx.sql`SELECT status FROM decisions WHERE id = ${decisionId}`);
				if (!exists) throw notFound(decisionId);
				throw new DecisionError(
					"decision-settled",
					`Decision ${decisionId} is already ${String(exists.status)}.`,
					"Nothing more can be answered or cancelled on it.",
					409,
				);
			}
			const stored = await tx.many(
				tx.sql`SELECT * FROM decision_answers WHERE decision_id = ${decisionId} ORDER BY question_index`,
				answerRow,
			);
			const answers = new Map(stored.map((a) => [a.question_index, a.answer]));
			const outcome = await change(tx, row, answers);
			if (outcome) {
				settled = buildResult(row.input, outcome.settling, answers, row.request_id ?? undefined);
				await tx.sql`UPDATE decisions SET status = ${settled.status === "answered" ? "answered" : "cancelled"},
					result = ${JSON.stringify(settled)}, settled_reason = ${outcome.reason}, settled_by = ${outcome.by},
					settled_at = ${this.deps.clock.now()} WHERE id = ${decisionId}`;
			}
			return (await this.#views(tx, tx.sql`SELECT * FROM decisions WHERE id = ${decisionId}`))[0]!;
		});
		this.deps.hub.publish(view.documentId, {
			type: "decision.updated",
			documentId: view.documentId,
			decision: view,
		});
		if (settled) {
			const settlement = {
				decision: view,
				requestId: view.requestId,
				session: view.session,
				result: settled,
			};
			for (const listener of [...this.#settledListeners]) {
				try {
					listener(settlement);
				} catch (error) {
					// The change is committed: a listener's failure must not undo it for the member.
					this.deps.log?.error("decision settled listener failed", { error, decision: view.id });
				}
			}
		}
		return view;
	}

	async #openDocumentSource(tx: Tx, documentId: string): Promise<string> {
		const state = await readDocumentState(tx, documentId, { lock: true });
		if (!state || state.deleted) {
			throw new DecisionError(
				"document-not-found",
				`No document ${documentId} exists, or it was deleted.`,
				undefined,
				404,
			);
		}
		if (state.archived) {
			throw new DecisionError(
				"document-archived",
				`Document ${documentId} is archived, so it takes no questions.`,
				undefined,
				409,
			);
		}
		const row = await tx.one(tx.sql`SELECT source FROM documents WHERE id = ${documentId}`);
		return String(row?.source ?? "");
	}

	async #views(db: Db, query: PromiseLike<unknown>): Promise<DecisionView[]> {
		return decisionViews(db, await db.many(query, decisionRow));
	}
}

function answered(questionIndex: number): DecisionError {
	return new DecisionError(
		"question-answered",
		`Question ${questionIndex} is already answered.`,
		"An answer is final once given.",
		409,
	);
}
