import { describe, expect, test } from "bun:test";
import type { Question } from "@chopin/agent-link";
import { buildResult, DecisionError, type MemberAnswer, toStoredAnswer } from "./answers";
import type { StoredAnswer } from "./decision-view";

const questionnaire: Question = {
	method: "questionnaire",
	params: {
		questions: [
			{
				question: "Which store?",
				header: "Store",
				options: [
					{ label: "SQLite", description: "Embedded" },
					{ label: "PostgreSQL", description: "A server" },
				],
			},
			{
				question: "Which layout?",
				header: "Layout",
				options: [
					{ label: "Grid", description: "", preview: "```mermaid\ngraph TD; A-->B\n```" },
					{ label: "List", description: "", preview: "" },
				],
			},
			{
				question: "Which platforms?",
				header: "Platforms",
				options: [
					{ label: "linux", description: "" },
					{ label: "mac", description: "" },
					{ label: "windows", description: "" },
				],
				multiSelect: true,
			},
		],
	},
};

const answer = (question: Question, index: number, given: MemberAnswer) =>
	toStoredAnswer(question, index, given);

function invalid(fn: () => unknown): string {
	try {
		fn();
	} catch (error) {
		if (error instanceof DecisionError) return error.code;
		throw error;
	}
	throw new Error("expected a DecisionError");
}

describe("member answers as stored", () => {
	test("option: a single-select label, carrying the option's preview only when it has one", () => {
		expect(answer(questionnaire, 0, { kind: "option", label: "SQLite" })).toEqual({
			questionIndex: 0,
			question: "Which store?",
			kind: "option",
			answer: "SQLite",
		});
		expect(answer(questionnaire, 1, { kind: "option", label: "Grid" })).toEqual({
			questionIndex: 1,
			question: "Which layout?",
			kind: "option",
			answer: "Grid",
			preview: "```mermaid\ngraph TD; A-->B\n```",
		});
		// An empty preview is no preview.
		expect(answer(questionnaire, 1, { kind: "option", label: "List" })).not.toHaveProperty("preview");
		expect(invalid(() => answer(questionnaire, 0, { kind: "option", label: "Oracle" }))).toBe(
			"invalid-answer",
		);
		expect(invalid(() => answer(questionnaire, 2, { kind: "option", label: "mac" }))).toBe("invalid-answer");
	});

	test("multi: offered labels of a multiSelect question, in the options' order, each once", () => {
		expect(answer(questionnaire, 2, { kind: "multi", labels: ["windows", "linux", "linux"] })).toEqual({
			questionIndex: 2,
			question: "Which platforms?",
			kind: "multi",
			answer: null,
			selected: ["linux", "windows"],
		});
		expect(invalid(() => answer(questionnaire, 2, { kind: "multi", labels: ["bsd"] }))).toBe(
			"invalid-answer",
		);
		expect(invalid(() => answer(questionnaire, 0, { kind: "multi", labels: ["SQLite"] }))).toBe(
			"invalid-answer",
		);
	});

	test("written: custom for a single-select question without previews, chat for multiSelect or previews", () => {
		expect(answer(questionnaire, 0, { kind: "written", text: "DuckDB" })).toMatchObject({
			kind: "custom",
			answer: "DuckDB",
		});
		expect(answer(questionnaire, 1, { kind: "written", text: "Cards" })).toMatchObject({
			kind: "chat",
			answer: "Cards",
		});
		expect(answer(questionnaire, 2, { kind: "written", text: "all of them" })).toMatchObject({
			kind: "chat",
		});
		expect(answer(questionnaire, 0, { kind: "added", labels: ["DuckDB", "LMDB"] })).toMatchObject({
			kind: "custom",
			answer: "DuckDB, LMDB",
		});
		expect(invalid(() => answer(questionnaire, 0, { kind: "written", text: "  " }))).toBe("invalid-answer");
		expect(invalid(() => answer(questionnaire, 3, { kind: "written", text: "x" }))).toBe("invalid-answer");
		expect(invalid(() => answer(questionnaire, 0, { kind: "confirm", yes: true }))).toBe("invalid-answer");
	});

	test("confirm, select, input and editor", () => {
		const confirm: Question = { method: "confirm", title: "Ship it?", message: "" };
		const select: Question = { method: "select", title: "Pick", choices: ["a", "b"] };
		const input: Question = { method: "input", title: "Name?" };
		const editor: Question = { method: "editor", title: "Edit", initial: "draft" };
		expect(answer(confirm, 0, { kind: "confirm", yes: false })).toEqual({ kind: "confirm", value: false });
		expect(answer(select, 0, { kind: "choice", choice: "b" })).toEqual({ kind: "choice", value: "b" });
		expect(answer(select, 0, { kind: "written", text: "neither" })).toEqual({
			kind: "written",
			value: "neither",
		});
		expect(answer(input, 0, { kind: "written", text: "Chopin" })).toEqual({ kind: "text", value: "Chopin" });
		expect(answer(editor, 0, { kind: "written", text: "" })).toEqual({ kind: "text", value: "" });
		expect(invalid(() => answer(select, 0, { kind: "choice", choice: "c" }))).toBe("invalid-answer");
		expect(invalid(() => answer(confirm, 0, { kind: "written", text: "yes" }))).toBe("invalid-answer");
		expect(invalid(() => answer(input, 1, { kind: "written", text: "x" }))).toBe("invalid-answer");
		expect(invalid(() => answer(input, 0, { kind: "written", text: "x".repeat(20_001) }))).toBe(
			"invalid-answer",
		);
	});
});

describe("input-result values, the spec's table row by row", () => {
	const all = new Map<number, StoredAnswer>([
		[0, answer(questionnaire, 0, { kind: "option", label: "PostgreSQL" })],
		[1, answer(questionnaire, 1, { kind: "written", text: "Cards" })],
		[2, answer(questionnaire, 2, { kind: "multi", labels: ["mac"] })],
	]);
	const none = new Map<number, StoredAnswer>();

	test("answered", () => {
		expect(buildResult(questionnaire, "answered", all)).toEqual({
			status: "answered",
			value: {
				answers: [
					{ questionIndex: 0, question: "Which store?", kind: "option", answer: "PostgreSQL" },
					{ questionIndex: 1, question: "Which layout?", kind: "chat", answer: "Cards" },
					{ questionIndex: 2, question: "Which platforms?", kind: "multi", answer: null, selected: ["mac"] },
				],
				cancelled: false,
			},
		});
		const one = (a: StoredAnswer) => new Map([[0, a]]);
		const confirm: Question = { method: "confirm", title: "Ship?", message: "Now" };
		const select: Question = { method: "select", title: "Pick", choices: ["a", "b"] };
		expect(buildResult(confirm, "answered", one({ kind: "confirm", value: true }))).toEqual({
			status: "answered",
			value: true,
		});
		expect(buildResult(confirm, "answered", one({ kind: "confirm", value: false }))).toEqual({
			status: "answered",
			value: false,
		});
		expect(buildResult(select, "answered", one({ kind: "choice", value: "a" }))).toEqual({
			status: "answered",
			value: "a",
		});
		expect(buildResult(select, "answered", one({ kind: "written", value: "c" }))).toEqual({
			status: "answered",
			value: null,
		});
		for (const method of ["input", "editor"] as const) {
			const q = { method, title: "T" } as Question;
			expect(buildResult(q, "answered", one({ kind: "text", value: "words" }))).toEqual({
				status: "answered",
				value: "words",
			});
		}
	});

	test("cancelled by a member: a questionnaire keeps the questions answered; the others take their empty value", () => {
		const partial = new Map([...all].filter(([i]) => i !== 1));
		expect(buildResult(questionnaire, "cancelled", partial)).toEqual({
			status: "cancelled",
			value: {
				answers: [
					{ questionIndex: 0, question: "Which store?", kind: "option", answer: "PostgreSQL" },
					{ questionIndex: 2, question: "Which platforms?", kind: "multi", answer: null, selected: ["mac"] },
				],
				cancelled: true,
			},
		});
		expect(buildResult(questionnaire, "cancelled", none)).toEqual({
			status: "cancelled",
			value: { answers: [], cancelled: true },
		});
		expect(buildResult({ method: "confirm", title: "", message: "" }, "cancelled", none)).toEqual({
			status: "cancelled",
			value: false,
		});
		for (const q of [
			{ method: "select", title: "", choices: [] },
			{ method: "input", title: "" },
			{ method: "editor", title: "" },
		] as Question[]) {
			expect(buildResult(q, "cancelled", none)).toEqual({ status: "cancelled", value: null });
		}
	});

	test("withdrawn: cancelled with no answers, even when some were given", () => {
		expect(buildResult(questionnaire, "withdrawn", all)).toEqual({
			status: "cancelled",
			value: { answers: [], cancelled: true },
		});
	});

	test("a result the client's reader would refuse is a bug, not a value", () => {
		const partial = new Map([...all].filter(([i]) => i !== 1));
		expect(() => buildResult(questionnaire, "answered", partial)).toThrow(
			/answers must cover every question/,
		);
	});
});
