// What a member may answer to each kind of question, the answer as stored, and the exact input-result value
// a settled question call gets (spec: Questions, the status and value table), checked with agent-link's reader.
import {
	codePointLength,
	inputResultSchema,
	type Question,
	type QuestionnaireAnswer,
	readInputResult,
} from "@chopin/agent-link";
import { z } from "zod";
import { DomainError } from "../domain-error";
import type { DecisionResult, StoredAnswer } from "./decision-view";

/** A member's own words (a written answer, an input or editor text) are at most this many characters. */
export const MAX_WRITTEN_ANSWER_CHARS = 20_000;

export type DecisionErrorCode =
	| "document-not-found"
	| "document-archived"
	| "invalid-question"
	| "invalid-answer"
	| "request-open"
	| "decision-not-found"
	| "decision-settled"
	| "question-answered";

export class DecisionError extends DomainError {
	override readonly name = "DecisionError";
	constructor(
		override readonly code: DecisionErrorCode,
		message: string,
		hint?: string,
		status = 400,
	) {
		super(code, message, hint, status);
	}
}

/**
 * What a member gives for one question. option: a single-select questionnaire question's option, by
 * label. multi: a multiSelect question's options. written: the member's own words (a questionnaire
 * question, a select instead of a choice, or an input or editor's text). added: options members added
 * to a questionnaire question, by label. confirm: yes or no. choice: one of a select's choices.
 */
export const memberAnswerSchema = z.discriminatedUnion("kind", [
	z.strictObject({ kind: z.literal("option"), label: z.string() }),
	z.strictObject({ kind: z.literal("multi"), labels: z.array(z.string()).min(1) }),
	z.strictObject({ kind: z.literal("written"), text: z.string() }),
	z.strictObject({ kind: z.literal("added"), labels: z.array(z.string()).min(1) }),
	z.strictObject({ kind: z.literal("confirm"), yes: z.boolean() }),
	z.strictObject({ kind: z.literal("choice"), choice: z.string() }),
]);
export type MemberAnswer = z.infer<typeof memberAnswerSchema>;

/** How many answers settle the call: a questionnaire's questions, else one. */
export function questionCount(question: Question): number {
	return question.method === "questionnaire" ? question.params.questions.length : 1;
}

/** Whether a questionnaire question has an option with a preview (a non-empty one). */
export function hasPreviews(options: readonly { preview?: string }[]): boolean {
	return options.some((o) => o.preview !== undefined && o.preview !== "");
}

function invalid(message: string): DecisionError {
	return new DecisionError("invalid-answer", message, "Answer with what the question offers.");
}

function written(text: string, allowBlank: boolean): string {
	if (!allowBlank && !text.trim()) throw invalid("The written answer is empty.");
	if (codePointLength(text, MAX_WRITTEN_ANSWER_CHARS) > MAX_WRITTEN_ANSWER_CHARS) {
		throw invalid(`The written answer is longer than ${MAX_WRITTEN_ANSWER_CHARS} characters.`);
	}
	return text;
}

/** The stored form of a member's answer to question questionIndex, or invalid-answer saying what is wrong. */
export function toStoredAnswer(
	question: Question,
	questionIndex: number,
	answer: MemberAnswer,
): StoredAnswer {
	const count = questionCount(question);
	if (!Number.isInteger(questionIndex) || questionIndex < 0 || questionIndex >= count) {
		throw invalid(`There is no question ${questionIndex}: this one has ${count}.`);
	}
	const wrongKind = () => invalid(`A ${question.method} question takes no ${answer.kind} answer.`);
	switch (question.method) {
		case "questionnaire": {
			const q = question.params.questions[questionIndex]!;
			const base = { questionIndex, question: q.question };
			const labels = q.options.map((o) => o.label);
			// A member's own words: custom for a single-select question without previews, else chat.
			const ownWordsKind = q.multiSelect || hasPreviews(q.options) ? "chat" : "custom";
			if (answer.kind === "option") {
				if (q.multiSelect) throw invalid("This question takes several options: answer with multi.");
				const option = q.options.find((o) => o.label === answer.label);
				if (!option) throw invalid(`"${answer.label.slice(0, 200)}" is not one of the question's options.`);
				const hasPreview = option.preview !== undefined && option.preview !== "";
				return {
					...base,
					kind: "option",
					answer: option.label,
					...(hasPreview && { preview: option.preview }),
				};
			}
			if (answer.kind === "multi") {
				if (!q.multiSelect) throw invalid("This question takes one option: answer with option.");
				const unknown = answer.labels.find((label) => !labels.includes(label));
				if (unknown !== undefined)
					throw invalid(`"${unknown.slice(0, 200)}" is not one of the question's options.`);
				// In the order the options are offered, each once.
				return {
					...base,
					kind: "multi",
					answer: null,
					selected: labels.filter((l) => answer.labels.includes(l)),
				};
			}
			if (answer.kind === "written")
				return { ...base, kind: ownWordsKind, answer: written(answer.text, false) };
			if (answer.kind === "added") {
				return { ...base, kind: ownWordsKind, answer: written(answer.labels.join(", "), false) };
			}
			throw wrongKind();
		}
		case "confirm":
			if (answer.kind !== "confirm") throw wrongKind();
			return { kind: "confirm", value: answer.yes };
		case "select":
			if (answer.kind === "choice") {
				if (!question.choices.includes(answer.choice)) {
					throw invalid(`"${answer.choice.slice(0, 200)}" is not one of the choices.`);
				}
				return { kind: "choice", value: answer.choice };
			}
			if (answer.kind === "written") return { kind: "written", value: written(answer.text, false) };
			throw wrongKind();
		case "input":
		case "editor":
			// An input or editor may be sent back empty on purpose (an editor's text cleared).
			if (answer.kind !== "written") throw wrongKind();
			return { kind: "text", value: written(answer.text, true) };
	}
}

/** How a decision settles: every question answered, a member cancelled one, or it was withdrawn. */
export type Settling = "answered" | "cancelled" | "withdrawn";

/**
 * The input-result status and value, exactly as the spec's table gives them. answered needs every
 * question's answer; cancelled keeps a questionnaire's answered questions; withdrawn keeps none.
 * The result is checked with agent-link's own reader, so a value the client would refuse is a bug here.
 */
export function buildResult(
	question: Question,
	settling: Settling,
	answers: ReadonlyMap<number, StoredAnswer>,
	requestId = "decision",
): DecisionResult {
	const status = settling === "answered" ? "answered" : "cancelled";
	const result = { status, value: resultValue(question, settling, answers) } as DecisionResult;
	const message = { type: "input-result" as const, request: requestId, ...result };
	const parsed = inputResultSchema.safeParse(message);
	const reading = parsed.success ? readInputResult(question, parsed.data) : undefined;
	if (!reading?.ok) {
		const why = reading ? reading.error : parsed.error?.issues[0]?.message;
		throw new Error(`A ${question.method} ${status} result was built wrong: ${why}`);
	}
	return result;
}

function resultValue(
	question: Question,
	settling: Settling,
	answers: ReadonlyMap<number, StoredAnswer>,
): unknown {
	const first = answers.get(0);
	if (question.method === "questionnaire") {
		const entries =
			settling === "withdrawn"
				? []
				: [...answers.entries()].sort(([a], [b]) => a - b).map(([, entry]) => entry as QuestionnaireAnswer);
		return { answers: entries, cancelled: settling !== "answered" };
	}
	if (settling !== "answered") return question.method === "confirm" ? false : null;
	if (!first) throw new Error(`An answered ${question.method} question has no answer.`);
	switch (first.kind) {
		case "confirm":
			return first.value;
		case "choice":
			return first.value;
		case "written":
			return null;
		case "text":
			return first.value;
		default:
			throw new Error(`A ${question.method} question holds a ${first.kind} answer.`);
	}
}
