/**
 * Reading an input-result against the question it answers: the value's shape depends on the
 * method (the Questions table), which only the asking side knows.
 */
import { describeIssues } from "./issues";
import {
	INPUT_RESULT_VALUES,
	type InputResultValue,
	type InputStatus,
	type Question,
	type QuestionMethod,
} from "./schemas/questions";
import type { InputResult } from "./schemas/server-messages";

export type InputResultReading<M extends QuestionMethod> =
	| { ok: true; status: "failed"; message: string }
	| { ok: true; status: Exclude<InputStatus, "failed">; value: InputResultValue<M> }
	| { ok: false; error: string };

/**
 * Checks result.value against what question's method answers with, including that a
 * questionnaire's answers are in question order, name real questions, and cover every question
 * when answered, and that a select's choice is one it offered.
 */
export function readInputResult<Q extends Question>(
	question: Q,
	result: InputResult,
): InputResultReading<Q["method"]> {
	if (result.status === "failed") return { ok: true, status: "failed", message: result.message ?? "" };
	const schema = INPUT_RESULT_VALUES[question.method][result.status];
	const parsed = schema.safeParse(result.value);
	if (!parsed.success) {
		return {
			ok: false,
			error: describeIssues(
				`${question.method} ${result.status} value`,
				parsed.error.issues,
				result.value,
				"the value",
			),
		};
	}
	const value = parsed.data as InputResultValue<Q["method"]>;
	const problem = mismatch(question, result.status, value);
	if (problem) return { ok: false, error: `Invalid ${question.method} ${result.status} value: ${problem}.` };
	return { ok: true, status: result.status, value };
}

function mismatch(question: Question, status: Exclude<InputStatus, "failed">, value: unknown): string | null {
	if (question.method === "select" && status === "answered" && value !== null) {
		return question.choices.includes(value as string) ? null : "the choice is not one the question offered";
	}
	if (question.method !== "questionnaire") return null;
	const { answers } = value as InputResultValue<"questionnaire">;
	const questions = question.params.questions;
	let previous = -1;
	for (const [i, answer] of answers.entries()) {
		if (answer.questionIndex <= previous) return `answers[${i}] is out of question order`;
		if (answer.questionIndex >= questions.length) return `answers[${i}] names no question`;
		previous = answer.questionIndex;
	}
	if (status === "answered" && answers.length !== questions.length)
		return "answers must cover every question";
	return null;
}
