// Decisions and their answers as stored, read back into the views the service returns.
import { questionSchema } from "@chopin/agent-link";
import { z } from "zod";
import { dbJson } from "../store/codecs";
import type { Db } from "../store/store";
import {
	type DecisionAnswer,
	type DecisionView,
	decisionResultSchema,
	SETTLED_REASONS,
	storedAnswerSchema,
	UNLINKED_REASONS,
} from "./decision-view";

export const decisionRow = z.object({
	id: z.string(),
	document_id: z.string(),
	seq: z.number().int(),
	request_id: z.string().nullable(),
	session: z.string().nullable(),
	workflow_run_id: z.string().nullable(),
	workflow_stage_id: z.string().nullable(),
	root_run_id: z.string().nullable(),
	input: dbJson(questionSchema),
	status: z.enum(["open", "answered", "cancelled"]),
	block_index: z.number().int().nullable(),
	block_digest: z.string().nullable(),
	unlinked_reason: z.enum(UNLINKED_REASONS).nullable(),
	result: dbJson(decisionResultSchema).nullable(),
	settled_reason: z.enum(SETTLED_REASONS).nullable(),
	settled_by: z.string().nullable(),
	created_at: z.number().int(),
	settled_at: z.number().int().nullable(),
	version: z.number().int(),
});
export type DecisionRow = z.infer<typeof decisionRow>;

export const answerRow = z.object({
	decision_id: z.string(),
	question_index: z.number().int(),
	answer: dbJson(storedAnswerSchema),
	answered_by: z.string(),
	answered_at: z.number().int(),
});

function toView(row: DecisionRow, answers: DecisionAnswer[]): DecisionView {
	return {
		id: row.id,
		documentId: row.document_id,
		seq: row.seq,
		requestId: row.request_id,
		session: row.session,
		workflowRunId: row.workflow_run_id,
		workflowStageId: row.workflow_stage_id,
		rootRunId: row.root_run_id,
		question: row.input,
		status: row.status,
		link:
			row.block_index !== null && row.block_digest !== null
				? { index: row.block_index, digest: row.block_digest }
				: null,
		unlinkedReason: row.unlinked_reason,
		answers,
		result: row.result,
		settledReason: row.settled_reason,
		settledBy: row.settled_by,
		createdAt: row.created_at,
		settledAt: row.settled_at,
		version: row.version,
	};
}

/** The views of these rows, each with its answers, in the rows' order. */
export async function decisionViews(db: Db, rows: readonly DecisionRow[]): Promise<DecisionView[]> {
	if (rows.length === 0) return [];
	const answers = await db.many(
		db.sql`SELECT * FROM decision_answers WHERE decision_id IN ${db.sql(rows.map((r) => r.id))}
			ORDER BY decision_id, question_index`,
		answerRow,
	);
	const byDecision = new Map<string, DecisionAnswer[]>();
	for (const a of answers) {
		const list = byDecision.get(a.decision_id) ?? [];
		list.push({
			questionIndex: a.question_index,
			answer: a.answer,
			answeredBy: a.answered_by,
			answeredAt: a.answered_at,
		});
		byDecision.set(a.decision_id, list);
	}
	return rows.map((row) => toView(row, byDecision.get(row.id) ?? []));
}
