/**
 * Questions: the five question methods an input-request carries, the block it may name, and
 * the value an input-result holds for each method and status (spec: Questions).
 */
import { z } from "zod";
import { CHOICES_MAX, OPTIONS_MAX, PREVIEW_MAX, QUESTIONS_MAX } from "../limits";
import { chars, count, flag, noteString, shortString, textString } from "./fields";

export const questionOptionSchema = z.strictObject({
	label: noteString,
	description: noteString,
	preview: chars(0, PREVIEW_MAX).optional(),
});

export const questionnaireQuestionSchema = z.strictObject({
	question: noteString,
	header: shortString,
	options: z.array(questionOptionSchema).max(OPTIONS_MAX),
	multiSelect: flag.optional(),
});

export const questionnaireSchema = z.strictObject({
	method: z.literal("questionnaire"),
	params: z.strictObject({
		questions: z.array(questionnaireQuestionSchema).min(1).max(QUESTIONS_MAX),
	}),
});
export const confirmQuestionSchema = z.strictObject({
	method: z.literal("confirm"),
	title: noteString,
	message: noteString,
});
export const selectQuestionSchema = z.strictObject({
	method: z.literal("select"),
	title: noteString,
	choices: z.array(noteString).max(CHOICES_MAX),
});
export const inputQuestionSchema = z.strictObject({
	method: z.literal("input"),
	title: noteString,
	placeholder: noteString.optional(),
});
export const editorQuestionSchema = z.strictObject({
	method: z.literal("editor"),
	title: noteString,
	initial: noteString.optional(),
});

/** input-request.input: one question call. */
export const questionSchema = z.discriminatedUnion("method", [
	questionnaireSchema,
	confirmQuestionSchema,
	selectQuestionSchema,
	inputQuestionSchema,
	editorQuestionSchema,
]);
export type Question = z.infer<typeof questionSchema>;
export type QuestionMethod = Question["method"];
export type Questionnaire = z.infer<typeof questionnaireSchema>;

/** The document block a question concerns, as read_plan or edit_plan named it. */
export const blockRefSchema = z.strictObject({
	index: count,
	digest: z.string().regex(/^sha256:[0-9a-fA-F]{64}$/, { error: "must be sha256: then 64 hex digits" }),
});
export type BlockRef = z.infer<typeof blockRefSchema>;

export const INPUT_STATUSES = ["answered", "expired", "cancelled", "failed"] as const;
export const inputStatusSchema = z.enum(INPUT_STATUSES);
export type InputStatus = z.infer<typeof inputStatusSchema>;

const answerBase = {
	questionIndex: count.max(QUESTIONS_MAX - 1),
	question: noteString,
};

/** The four kinds of a questionnaire answer entry. */
export const optionAnswerSchema = z.strictObject({
	...answerBase,
	kind: z.literal("option"),
	answer: noteString,
	preview: chars(0, PREVIEW_MAX).optional(),
});
export const multiAnswerSchema = z.strictObject({
	...answerBase,
	kind: z.literal("multi"),
	answer: z.null(),
	selected: z.array(noteString).max(OPTIONS_MAX),
});
/** A written answer is a member's own text, so only the frame bounds it. */
export const customAnswerSchema = z.strictObject({
	...answerBase,
	kind: z.literal("custom"),
	answer: textString,
});
export const chatAnswerSchema = z.strictObject({
	...answerBase,
	kind: z.literal("chat"),
	answer: textString,
});

export const questionnaireAnswerSchema = z.discriminatedUnion("kind", [
	optionAnswerSchema,
	multiAnswerSchema,
	customAnswerSchema,
	chatAnswerSchema,
]);
export type QuestionnaireAnswer = z.infer<typeof questionnaireAnswerSchema>;

const answers = z.array(questionnaireAnswerSchema).max(QUESTIONS_MAX);

/** input-result.value by method and status; failed has no value (spec: the Questions table). */
export const INPUT_RESULT_VALUES = {
	questionnaire: {
		answered: z.strictObject({ answers, cancelled: z.literal(false) }),
		expired: z.strictObject({ answers: answers.max(0), cancelled: z.literal(true) }),
		cancelled: z.strictObject({ answers, cancelled: z.literal(true) }),
	},
	confirm: { answered: z.boolean(), expired: z.literal(false), cancelled: z.literal(false) },
	select: { answered: noteString.nullable(), expired: z.null(), cancelled: z.null() },
	input: { answered: textString, expired: z.null(), cancelled: z.null() },
	editor: { answered: textString, expired: z.null(), cancelled: z.null() },
} as const;

type ValueStatus = Exclude<InputStatus, "failed">;
export type InputResultValue<M extends QuestionMethod, S extends ValueStatus = ValueStatus> = z.infer<
	(typeof INPUT_RESULT_VALUES)[M][S]
>;

export function inputResultValueSchema<M extends QuestionMethod, S extends ValueStatus>(
	method: M,
	status: S,
): (typeof INPUT_RESULT_VALUES)[M][S] {
	return INPUT_RESULT_VALUES[method][status];
}
