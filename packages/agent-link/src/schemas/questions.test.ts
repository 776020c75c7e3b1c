import { describe, expect, test } from "bun:test";
import { parseClientFrame } from "../parse";
import { answers, questions } from "../testing/examples";
import { objectPaths, repeat, withExtraField } from "../testing/helpers";
import { questionnaireAnswerSchema, questionSchema } from "./questions";

function parseQuestion(input: unknown) {
	return parseClientFrame(JSON.stringify({ type: "input-request", request: "req-1", session: "s1", input }));
}

function expectRefused(input: unknown, fragment: string) {
	const result = parseQuestion(input);
	expect(result.ok).toBe(false);
	if (!result.ok) expect(result.error.message).toContain(fragment);
}

const option = { label: "A", description: "The first." };
const question = (n: number) => ({ question: "Which?", header: "Pick", options: Array(n).fill(option) });
const questionnaire = (qs: unknown[]) => ({ method: "questionnaire", params: { questions: qs } });

describe("questions", () => {
	for (const [name, example] of Object.entries(questions)) {
		test(`${name}: the spec's example parses; an unknown field is refused at every level`, () => {
			expect(parseQuestion(example).ok).toBe(true);
			for (const path of objectPaths(example)) {
				expect(
					parseQuestion(withExtraField(example, path)).ok,
					`extra field at ${JSON.stringify(path)}`,
				).toBe(false);
			}
		});
	}

	test("the five methods and nothing else", () => {
		const methods: string[] = questionSchema.options.map((o) => o.shape.method.value);
		expect(methods.sort()).toEqual(["confirm", "editor", "input", "questionnaire", "select"].sort());
		expectRefused({ method: "ask", title: "?" }, "input.method must be one of");
	});

	test("a questionnaire has 1 to 16 questions of up to 32 options", () => {
		expect(parseQuestion(questionnaire(Array(16).fill(question(32)))).ok).toBe(true);
		expectRefused(
			questionnaire(Array(17).fill(question(1))),
			"input.params.questions has more than 16 entries",
		);
		expectRefused(questionnaire([]), "input.params.questions must have at least 1 entry");
		expectRefused(
			questionnaire([question(33)]),
			"input.params.questions[0].options has more than 32 entries",
		);
		expect(parseQuestion(questionnaire([question(0)])).ok).toBe(true);
	});

	test("header is short (128); question, label and description are notes (4000); preview is 16,000", () => {
		const q = question(1);
		expect(parseQuestion(questionnaire([{ ...q, header: repeat(128) }])).ok).toBe(true);
		expectRefused(questionnaire([{ ...q, header: repeat(129) }]), "questions[0].header is longer than 128");
		expect(parseQuestion(questionnaire([{ ...q, question: repeat(4000) }])).ok).toBe(true);
		expectRefused(
			questionnaire([{ ...q, question: repeat(4001) }]),
			"questions[0].question is longer than 4000",
		);
		expectRefused(
			questionnaire([{ ...q, options: [{ ...option, label: repeat(4001) }] }]),
			"options[0].label",
		);
		expectRefused(
			questionnaire([{ ...q, options: [{ ...option, description: repeat(4001) }] }]),
			"options[0].description",
		);
		expect(
			parseQuestion(questionnaire([{ ...q, options: [{ ...option, preview: repeat(16_000) }] }])).ok,
		).toBe(true);
		expectRefused(
			questionnaire([{ ...q, options: [{ ...option, preview: repeat(16_001) }] }]),
			"options[0].preview is longer than 16000 characters",
		);
	});

	test("select offers up to 32 choices of up to 4000 characters", () => {
		const choices = (n: number) => Array.from({ length: n }, (_, i) => `choice ${i}`);
		expect(parseQuestion({ ...questions.select, choices: choices(32) }).ok).toBe(true);
		expectRefused({ ...questions.select, choices: choices(33) }, "input.choices has more than 32 entries");
		expectRefused({ ...questions.select, choices: [repeat(4001)] }, "input.choices[0] is longer than 4000");
	});

	test("titles, messages, placeholder and initial are notes", () => {
		expectRefused({ ...questions.confirm, title: repeat(4001) }, "input.title");
		expectRefused({ ...questions.confirm, message: repeat(4001) }, "input.message");
		expectRefused({ ...questions.input, placeholder: repeat(4001) }, "input.placeholder");
		expectRefused({ ...questions.editor, initial: repeat(4001) }, "input.initial");
		expect(parseQuestion({ method: "input", title: "Name" }).ok).toBe(true);
		expect(parseQuestion({ method: "editor", title: "Edit" }).ok).toBe(true);
	});

	test("the four answer entry kinds", () => {
		for (const [kind, entry] of Object.entries(answers)) {
			expect(questionnaireAnswerSchema.safeParse(entry).success, kind).toBe(true);
			expect(questionnaireAnswerSchema.safeParse({ ...entry, extra: 1 }).success, `${kind} strict`).toBe(
				false,
			);
		}
		expect(questionnaireAnswerSchema.safeParse({ ...answers.multi, answer: "PostgreSQL" }).success).toBe(
			false,
		);
		expect(questionnaireAnswerSchema.safeParse({ ...answers.option, answer: null }).success).toBe(false);
		expect(questionnaireAnswerSchema.safeParse({ ...answers.custom, preview: "x" }).success).toBe(false);
		expect(questionnaireAnswerSchema.safeParse({ ...answers.chat, kind: "other" }).success).toBe(false);
		expect(questionnaireAnswerSchema.safeParse({ ...answers.option, questionIndex: 16 }).success).toBe(false);
	});
});
