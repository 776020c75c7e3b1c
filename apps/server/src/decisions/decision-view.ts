// A Decision as the service returns it and the live hub sends it: the question call, its placement, answers and result.
import { inputStatusSchema, questionnaireAnswerSchema, questionSchema } from "@chopin/agent-link";
import { z } from "zod";

export const DECISION_STATUSES = ["open", "answered", "cancelled"] as const;
export type DecisionStatus = (typeof DECISION_STATUSES)[number];

/** Why a settled decision settled: every question answered, a member cancelled one, or the asker withdrew it. */
export const SETTLED_REASONS = ["answered", "cancelled-by-member", "withdrawn"] as const;
export type SettledReason = (typeof SETTLED_REASONS)[number];

/** Why a question that named a block is not linked to it (spec: Questions, block). */
export const UNLINKED_REASONS = ["changed", "repeated", "decision-card"] as const;

/**
 * One stored answer. A questionnaire's is the input-result answer entry itself (option, multi,
 * custom, chat); the other methods keep what the member gave, from which the value is made.
 */
export const storedAnswerSchema = z.union([
	questionnaireAnswerSchema,
	z.strictObject({ kind: z.literal("confirm"), value: z.boolean() }),
	/** select: one of the choices. */
	z.strictObject({ kind: z.literal("choice"), value: z.string() }),
	/** select: a member's own words instead of a choice (its value is null). */
	z.strictObject({ kind: z.literal("written"), value: z.string() }),
	/** input and editor. */
	z.strictObject({ kind: z.literal("text"), value: z.string() }),
]);
export type StoredAnswer = z.infer<typeof storedAnswerSchema>;

export const decisionAnswerSchema = z.strictObject({
	questionIndex: z.int().nonnegative(),
	answer: storedAnswerSchema,
	answeredBy: z.string(),
	answeredAt: z.int(),
});
export type DecisionAnswer = z.infer<typeof decisionAnswerSchema>;

/** An input-result without its type and request: what the agent endpoint sends for this decision. */
export const decisionResultSchema = z.strictObject({
	status: inputStatusSchema,
	value: z.json(),
});
export type DecisionResult = z.infer<typeof decisionResultSchema>;

export const decisionViewSchema = z.strictObject({
	id: z.string(),
	documentId: z.string(),
	/** Where a card is shown: 1, 2, 3… per document in the order decisions were asked. */
	seq: z.int().positive(),
	/** The input-request id and session it came from; null for a question asked without a connection. */
	requestId: z.string().nullable(),
	session: z.string().nullable(),
	workflowRunId: z.string().nullable(),
	workflowStageId: z.string().nullable(),
	rootRunId: z.string().nullable(),
	/** The question call as asked, verbatim. */
	question: questionSchema,
	status: z.enum(DECISION_STATUSES),
	/** The block the cards follow, as it was when asked; null when they go at the end of the document. */
	link: z.strictObject({ index: z.int().nonnegative(), digest: z.string() }).nullable(),
	/** Set when the question named a block that could not be linked. */
	unlinkedReason: z.enum(UNLINKED_REASONS).nullable(),
	/** Answers given so far, in question order. */
	answers: z.array(decisionAnswerSchema),
	/** Set once settled: the exact status and value of the input-result. */
	result: decisionResultSchema.nullable(),
	settledReason: z.enum(SETTLED_REASONS).nullable(),
	/** The member who answered last or cancelled; null when withdrawn. */
	settledBy: z.string().nullable(),
	createdAt: z.int(),
	settledAt: z.int().nullable(),
	/** Grows by one with every change; a page keeps the highest it has seen. */
	version: z.int().nonnegative(),
});
export type DecisionView = z.infer<typeof decisionViewSchema>;
