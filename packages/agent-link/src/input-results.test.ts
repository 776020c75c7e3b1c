import { describe, expect, test } from "bun:test";
import { readInputResult } from "./input-results";
import type { Question } from "./schemas/questions";
import type { InputResult } from "./schemas/server-messages";
import { answers, questions } from "./testing/examples";

const two: Question = {
	method: "questionnaire",
	params: {
		questions: [
			{ question: "Storage?", header: "Storage", options: [{ label: "PostgreSQL", description: "" }] },
			{ question: "Rollout?", header: "Rollout", options: [{ label: "Pilot", description: "" }] },
		],
	},
};
const first = { ...answers.option, questionIndex: 0 };
const second = { ...answers.custom, questionIndex: 1 };

const result = (status: InputResult["status"], value?: unknown, message?: string): InputResult =>
	({
		type: "input-result",
		request: "req-1",
		status,
		...(value === undefined ? {} : { value }),
		...(message === undefined ? {} : { message }),
	}) as InputResult;

describe("input-result values by method (the Questions table)", () => {
	test("questionnaire: answered covers every question; expired is empty; cancelled keeps the answered ones", () => {
		expect(readInputResult(two, result("answered", { answers: [first, second], cancelled: false })).ok).toBe(
			true,
		);
		expect(readInputResult(two, result("answered", { answers: [first], cancelled: false }))).toEqual({
			ok: false,
			error: "Invalid questionnaire answered value: answers must cover every question.",
		});
		expect(readInputResult(two, result("answered", { answers: [first, second], cancelled: true })).ok).toBe(
			false,
		);
		expect(readInputResult(two, result("expired", { answers: [], cancelled: true })).ok).toBe(true);
		expect(readInputResult(two, result("expired", { answers: [first], cancelled: true })).ok).toBe(false);
		expect(readInputResult(two, result("cancelled", { answers: [second], cancelled: true })).ok).toBe(true);
		expect(readInputResult(two, result("cancelled", { answers: [], cancelled: true })).ok).toBe(true);
		expect(readInputResult(two, result("cancelled", { answers: [], cancelled: false })).ok).toBe(false);
	});

	test("questionnaire: answers are in question order and name real questions", () => {
		const swapped = readInputResult(two, result("answered", { answers: [second, first], cancelled: false }));
		expect(swapped.ok).toBe(false);
		const beyond = readInputResult(
			two,
			result("cancelled", { answers: [{ ...first, questionIndex: 2 }], cancelled: true }),
		);
		expect(beyond).toEqual({
			ok: false,
			error: "Invalid questionnaire cancelled value: answers[0] names no question.",
		});
	});

	test("questionnaire: every answer kind is read", () => {
		const one = questions.questionnaire;
		for (const entry of Object.values(answers)) {
			expect(readInputResult(one, result("answered", { answers: [entry], cancelled: false })).ok).toBe(true);
		}
	});

	test("confirm: a boolean when answered, false otherwise", () => {
		const confirm = questions.confirm;
		expect(readInputResult(confirm, result("answered", true))).toEqual({
			ok: true,
			status: "answered",
			value: true,
		});
		expect(readInputResult(confirm, result("answered", false)).ok).toBe(true);
		expect(readInputResult(confirm, result("expired", false)).ok).toBe(true);
		expect(readInputResult(confirm, result("cancelled", false)).ok).toBe(true);
		expect(readInputResult(confirm, result("cancelled", true)).ok).toBe(false);
		expect(readInputResult(confirm, result("answered", "yes")).ok).toBe(false);
	});

	test("select: the chosen string from choices, or null", () => {
		const select = questions.select;
		expect(readInputResult(select, result("answered", "A small pilot")).ok).toBe(true);
		expect(readInputResult(select, result("answered", null)).ok).toBe(true);
		expect(readInputResult(select, result("answered", "Something else"))).toEqual({
			ok: false,
			error: "Invalid select answered value: the choice is not one the question offered.",
		});
		expect(readInputResult(select, result("expired", null)).ok).toBe(true);
		expect(readInputResult(select, result("cancelled", "A small pilot")).ok).toBe(false);
	});

	test("input and editor: text when answered, null otherwise", () => {
		for (const question of [questions.input, questions.editor]) {
			expect(readInputResult(question, result("answered", "text")).ok).toBe(true);
			expect(readInputResult(question, result("answered", null)).ok).toBe(false);
			expect(readInputResult(question, result("expired", null)).ok).toBe(true);
			expect(readInputResult(question, result("cancelled", null)).ok).toBe(true);
			expect(readInputResult(question, result("cancelled", "")).ok).toBe(false);
		}
	});

	test("failed carries why, for every method", () => {
		for (const question of Object.values(questions)) {
			expect(readInputResult(question, result("failed", undefined, "Isolated sessions cannot ask."))).toEqual(
				{
					ok: true,
					status: "failed",
					message: "Isolated sessions cannot ask.",
				},
			);
		}
	});

	test("a wrong value names its field, or the value itself", () => {
		expect(readInputResult(questions.confirm, result("answered", "yes"))).toEqual({
			ok: false,
			error: "Invalid confirm answered value: the value must be a boolean.",
		});
		const reading = readInputResult(
			two,
			result("answered", { answers: [{ ...first, kind: "x" }], cancelled: false }),
		);
		expect(reading.ok).toBe(false);
		if (!reading.ok) expect(reading.error).toContain("answers[0].kind must be one of");
	});
});
