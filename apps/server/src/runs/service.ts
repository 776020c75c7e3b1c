// Run cards: a session's runs reports applied to the stored cards, the statuses Chat shows, live runs stopped
// when a link closes, and a new run replacing the cards of runs that ended (see docs/chat.md, Run cards).
import { runsSchema, stageSchema } from "@chopin/agent-link";
import { z } from "zod";
import { readDocumentState } from "../documents/document-state";
import type { DomainDeps } from "../domain-deps";
import { DomainError } from "../domain-error";
import { dbJson } from "../store/codecs";
import type { Db } from "../store/store";
import { displayRunStatus, displayStageStatuses, isLive } from "./display";
import { applyCard, type StoredRun, storedCardSchema } from "./merge";
import type { RunCardView } from "./run-view";

/** A runs message without its type and session: what the agent endpoint passes on. */
export const runsReportSchema = runsSchema.omit({ type: true, session: true });
export type RunsReport = z.infer<typeof runsReportSchema>;

export class RunsError extends DomainError {
	override readonly name = "RunsError";
	constructor(
		override readonly code: "invalid-runs" | "document-not-found",
		message: string,
		status = 400,
	) {
		super(code, message, undefined, status);
	}
}

const runRow = z.object({
	document_id: z.string(),
	run_id: z.string(),
	session: z.string().nullable(),
	card: dbJson(storedCardSchema),
	stages: dbJson(z.array(stageSchema)),
	updated_at: z.number().int(),
});
type RunRow = z.infer<typeof runRow>;

export function toRunView(session: string | null, run: StoredRun): RunCardView {
	const displayStatus = displayRunStatus(run.card);
	const stageStatuses = displayStageStatuses(run.stages, displayStatus);
	const { card } = run;
	return {
		id: card.id,
		session,
		name: card.name,
		reportedStatus: card.status,
		displayStatus,
		live: isLive(displayStatus),
		started: card.started,
		updated: card.updated,
		...(card.ended !== undefined && { ended: card.ended }),
		waiting: card.waiting,
		earlierStages: card.earlierStages,
		stages: run.stages.map((stage, i) => ({ ...stage, displayStatus: stageStatuses[i]! })),
	};
}

const viewOf = (row: RunRow) => toRunView(row.session, { card: row.card, stages: row.stages });

/** Cards in the order Chat lists them: by when the run started, then by id. */
const byStart = (a: RunCardView, b: RunCardView) =>
	a.started - b.started || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export interface RunsChange {
	/** The cards this change touched, whole. */
	cards: RunCardView[];
	/** Cards no longer shown. */
	removed: string[];
}

export class RunService {
	/** The latest report's active and paused root runs, per document and session; a restart forgets them. */
	readonly #roots = new Map<string, { active: string[]; paused: string[] }>();
	/** Sessions of a Planner whose link dropped with its work kept (per document and session, in memory). */
	readonly #disconnected = new Set<string>();

	constructor(private readonly deps: DomainDeps) {}

	/**
	 * Applies one runs report of a session: each card changes its stored run (see merge.ts). When a
	 * report brings a run the document has no card for, the cards of every run that has ended and is
	 * not in the report are removed: a later run replaces ended cards.
	 */
	async apply(documentId: string, session: string, report: unknown): Promise<RunsChange> {
		const parsed = runsReportSchema.safeParse(report);
		if (!parsed.success) {
			const issue = parsed.error.issues[0]!;
			throw new RunsError(
				"invalid-runs",
				`The runs report is not valid: ${issue.path.join(".")}: ${issue.message}.`,
			);
		}
		const { active, paused, cards } = parsed.data;
		const now = this.deps.clock.now();
		const change = await this.deps.store.transaction(async (tx) => {
			await this.#checkDocument(tx, documentId);
			const stored = new Map((await this.#rows(tx, documentId)).map((r) => [r.run_id, r]));
			const touched = new Map<string, RunCardView>();
			// A run listed twice in one report builds on its own first card.
			const built = new Map<string, StoredRun>();
			let newRun = false;
			for (const card of cards) {
				const previous = stored.get(card.id);
				const next = applyCard(
					built.get(card.id) ?? (previous && { card: previous.card, stages: previous.stages }),
					card,
				);
				built.set(card.id, next);
				newRun ||= !previous;
				await tx.sql`INSERT INTO run_cards ${tx.sql({
					document_id: documentId,
					run_id: card.id,
					session,
					card: JSON.stringify(next.card),
					stages: JSON.stringify(next.stages),
					status: next.card.status,
					updated_at: now,
				})} ON CONFLICT (document_id, run_id) DO UPDATE SET session = excluded.session, card = excluded.card,
					stages = excluded.stages, status = excluded.status, updated_at = excluded.updated_at`;
				touched.set(card.id, toRunView(session, next));
			}
			const removed: string[] = [];
			if (newRun) {
				for (const row of stored.values()) {
					if (touched.has(row.run_id) || viewOf(row).live) continue;
					await tx.sql`DELETE FROM run_cards WHERE document_id = ${documentId} AND run_id = ${row.run_id}`;
					removed.push(row.run_id);
				}
			}
			return { cards: [...touched.values()], removed };
		});
		this.#roots.set(key(documentId, session), { active, paused });
		this.#publish(documentId, change);
		return change;
	}

	/**
	 * A link closed: its session's live runs (running, waiting, paused, or finished without ended) show
	 * stopped from now on. Without a session, every live run of the document.
	 */
	async stopLiveRuns(documentId: string, session?: string): Promise<RunsChange> {
		const now = this.deps.clock.now();
		const change = await this.deps.store.transaction(async (tx) => {
			const rows = (await this.#rows(tx, documentId)).filter(
				(r) => session === undefined || r.session === session,
			);
			const cards: RunCardView[] = [];
			for (const row of rows) {
				if (!viewOf(row).live) continue;
				const card = { ...row.card, status: "stopped" as const };
				await tx.sql`UPDATE run_cards SET card = ${JSON.stringify(card)}, status = 'stopped', updated_at = ${now}
					WHERE document_id = ${documentId} AND run_id = ${row.run_id}`;
				cards.push(toRunView(row.session, { card, stages: row.stages }));
			}
			return { cards, removed: [] };
		});
		if (session === undefined) {
			for (const k of [...this.#roots.keys()]) if (k.startsWith(key(documentId, ""))) this.#roots.delete(k);
		} else {
			this.#roots.delete(key(documentId, session));
		}
		this.#publish(documentId, change);
		return change;
	}

	/** The document's run cards as Chat shows them, in the order they started. */
	async list(documentId: string): Promise<RunCardView[]> {
		const views = (await this.#rows(this.deps.store, documentId)).map(viewOf).sort(byStart);
		return views.map((view) => this.#marked(documentId, view));
	}

	/**
	 * A Planner's link dropped with these sessions kept (on), or they came back or ended (off): their cards keep
	 * the status last reported and say the Planner is disconnected meanwhile. Publishes the cards it changed.
	 */
	async setDisconnected(documentId: string, sessions: readonly string[], on: boolean): Promise<void> {
		const changed = new Set<string>();
		for (const session of sessions) {
			const k = key(documentId, session);
			if (this.#disconnected.has(k) === on) continue;
			if (on) this.#disconnected.add(k);
			else this.#disconnected.delete(k);
			changed.add(session);
		}
		if (changed.size === 0) return;
		const rows = await this.#rows(this.deps.store, documentId);
		const cards = rows.filter((r) => r.session !== null && changed.has(r.session)).map(viewOf);
		this.#publish(documentId, { cards, removed: [] });
	}

	/** The root runs the session's latest report listed as active and paused (none before a report). */
	roots(documentId: string, session: string): { active: string[]; paused: string[] } {
		return this.#roots.get(key(documentId, session)) ?? { active: [], paused: [] };
	}

	#rows(db: Db, documentId: string): Promise<RunRow[]> {
		return db.many(db.sql`SELECT * FROM run_cards WHERE document_id = ${documentId}`, runRow);
	}

	async #checkDocument(db: Db, documentId: string): Promise<void> {
		// Locked: two sessions' reports for one document take turns, so replacing ended cards sees both.
		const state = await readDocumentState(db, documentId, { lock: true });
		if (!state || state.deleted) {
			throw new RunsError("document-not-found", `No document ${documentId} exists, or it was deleted.`, 404);
		}
	}

	#publish(documentId: string, change: RunsChange): void {
		if (change.cards.length === 0 && change.removed.length === 0) return;
		const cards = change.cards.map((card) => this.#marked(documentId, card));
		this.deps.hub.publish(documentId, { type: "runs.updated", documentId, ...change, cards });
	}

	#marked(documentId: string, view: RunCardView): RunCardView {
		const off = view.session === null || !this.#disconnected.has(key(documentId, view.session));
		return off ? view : { ...view, disconnected: true };
	}
}

function key(documentId: string, session: string): string {
	return `${documentId}\u0000${session}`;
}
