// Spec "Questions": an input-request becomes Decisions placed after its block, members answer them through the
// service the page uses, and the exact input-result per method comes back; input-cancel, the 16-open limit,
// isolated sessions, an answer held while its root run is paused, and withdrawal when the link closes.
import { afterEach, describe, expect, test } from "bun:test";
import { type Question, readInputResult } from "@chopin/agent-link";
import { splitBlocks } from "../documents/blocks";
import { AgentFixture } from "../testing/agent-fixture";
import type { AgentSocket } from "../testing/agent-socket";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

const SOURCE = "# Plan\n\nWe pick a store.\n\n## Rollout\n\nIn two steps.\n";

async function inTurn() {
	f = await AgentFixture.start();
	const doc = await f.createDocument({ source: SOURCE });
	await f.signIn("alice");
	const { socket } = await f.attach("alice", doc.id);
	const turn = await f.chatTurn(socket, doc.id, "bob");
	const ask = (request: string, input: Question, extra: Record<string, unknown> = {}) =>
		socket.send({ type: "input-request", request, session: turn.session, input, ...extra });
	const decisionOf = async (request: string) => {
		await f!.until(
			async () => !!(await f!.ctx.domain.decisions.findByRequest(doc.id, request)),
			`the Decision of ${request}`,
		);
		return (await f!.ctx.domain.decisions.findByRequest(doc.id, request))!;
	};
	return { f, socket, turn, ask, decisionOf, documentId: doc.id };
}

const questionnaire: Question = {
	method: "questionnaire",
	params: {
		questions: [
			{
				question: "Which store?",
				header: "Store",
				options: [
					{ label: "SQLite", description: "Embedded" },
					{ label: "PostgreSQL", description: "A server", preview: "```sql\nselect 1\n```" },
				],
			},
			{
				question: "Which regions?",
				header: "Regions",
				multiSelect: true,
				options: [
					{ label: "EU", description: "" },
					{ label: "US", description: "" },
				],
			},
			{ question: "Anything else?", header: "Notes", options: [{ label: "No", description: "" }] },
		],
	},
};

describe("the five methods, answered on the page", () => {
	const cases: [string, Question, (id: string, f: AgentFixture) => Promise<unknown>, unknown][] = [
		[
			"questionnaire",
			questionnaire,
			async (id, f) => {
				await f.ctx.domain.decisions.answer(id, {
					questionIndex: 0,
					answer: { kind: "option", label: "SQLite" },
					by: "bob",
				});
				await f.ctx.domain.decisions.answer(id, {
					questionIndex: 1,
					answer: { kind: "multi", labels: ["US", "EU"] },
					by: "carol",
				});
				await f.ctx.domain.decisions.answer(id, {
					questionIndex: 2,
					answer: { kind: "written", text: "Ship it." },
					by: "bob",
				});
			},
			{
				answers: [
					{ questionIndex: 0, question: "Which store?", kind: "option", answer: "SQLite" },
					{
						questionIndex: 1,
						question: "Which regions?",
						kind: "multi",
						answer: null,
						selected: ["EU", "US"],
					},
					{ questionIndex: 2, question: "Anything else?", kind: "custom", answer: "Ship it." },
				],
				cancelled: false,
			},
		],
		[
			"confirm",
			{ method: "confirm", title: "Ship on Friday?", message: "It is a holiday." },
			(id, f) => f.ctx.domain.decisions.answer(id, { answer: { kind: "confirm", yes: true }, by: "bob" }),
			true,
		],
		[
			"select",
			{ method: "select", title: "Region?", choices: ["EU", "US"] },
			(id, f) => f.ctx.domain.decisions.answer(id, { answer: { kind: "choice", choice: "US" }, by: "bob" }),
			"US",
		],
		[
			"input",
			{ method: "input", title: "Name the release", placeholder: "v1" },
			(id, f) =>
				f.ctx.domain.decisions.answer(id, { answer: { kind: "written", text: "Aurora" }, by: "bob" }),
			"Aurora",
		],
		[
			"editor",
			{ method: "editor", title: "Edit the notes", initial: "draft" },
			(id, f) =>
				f.ctx.domain.decisions.answer(id, { answer: { kind: "written", text: "final notes" }, by: "bob" }),
			"final notes",
		],
	];
	for (const [method, question, answer, value] of cases) {
		test(`${method}: answered with the exact value`, async () => {
			const { f, socket, ask, decisionOf } = await inTurn();
			ask("q1", question);
			const decision = await decisionOf("q1");
			expect(decision.status).toBe("open");
			await answer(decision.id, f);
			const result = await socket.expect("input-result");
			expect(result).toEqual({
				type: "input-result",
				request: "q1",
				status: "answered",
				value: value as never,
			});
			expect(readInputResult(question, result)).toMatchObject({ ok: true, status: "answered" });
		});
	}
});

describe("placement, cancel and limits", () => {
	test("the cards go after the named block; a changed block or none puts them at the end", async () => {
		const { ask, decisionOf } = await inTurn();
		const blocks = splitBlocks(SOURCE);
		const confirm: Question = { method: "confirm", title: "OK?", message: "" };
		ask("q1", confirm, { block: { index: 1, digest: blocks[1]!.digest } });
		ask("q2", confirm, { block: { index: 1, digest: blocks[3]!.digest } });
		ask("q3", confirm);
		expect((await decisionOf("q1")).link).toEqual({ index: 1, digest: blocks[1]!.digest });
		expect(await decisionOf("q2")).toMatchObject({ link: null, unlinkedReason: "changed" });
		expect(await decisionOf("q3")).toMatchObject({ link: null, unlinkedReason: null });
	});

	test("without decision-option-previews, an option's preview is joined onto its description", async () => {
		const { ask, decisionOf } = await inTurn();
		ask("q1", questionnaire);
		const decision = await decisionOf("q1");
		const question = decision.question as Extract<Question, { method: "questionnaire" }>;
		expect(question.params.questions[0]!.options).toEqual([
			{ label: "SQLite", description: "Embedded" },
			{ label: "PostgreSQL", description: "A server\n\n```sql\nselect 1\n```" },
		]);
	});

	test("input-cancel withdraws the Decision and answers cancelled; a member's cancel answers cancelled with the answers given", async () => {
		const { f, socket, ask, decisionOf } = await inTurn();
		ask("q1", { method: "select", title: "Region?", choices: ["EU"] });
		const first = await decisionOf("q1");
		socket.send({ type: "input-cancel", request: "q1" });
		expect(await socket.expect("input-result")).toEqual({
			type: "input-result",
			request: "q1",
			status: "cancelled",
			value: null,
		});
		expect(await f.ctx.domain.decisions.get(first.id)).toMatchObject({
			status: "cancelled",
			settledReason: "withdrawn",
		});

		ask("q2", questionnaire);
		const second = await decisionOf("q2");
		await f.ctx.domain.decisions.answer(second.id, {
			questionIndex: 0,
			answer: { kind: "option", label: "PostgreSQL" },
			by: "bob",
		});
		await f.ctx.domain.decisions.cancelQuestion(second.id, { questionIndex: 1, by: "carol" });
		expect(await socket.expect("input-result")).toEqual({
			type: "input-result",
			request: "q2",
			status: "cancelled",
			value: {
				answers: [{ questionIndex: 0, question: "Which store?", kind: "option", answer: "PostgreSQL" }],
				cancelled: true,
			},
		});
	});

	test("16 open questions per connection: the 17th fails with a message", async () => {
		const { f, socket, ask, documentId } = await inTurn();
		for (let i = 1; i <= 17; i++) ask(`q${i}`, { method: "input", title: `Question ${i}` });
		expect(await socket.expect("input-result")).toEqual({
			type: "input-result",
			request: "q17",
			status: "failed",
			message:
				"This connection already has 16 open questions: wait for an answer, or cancel one with input-cancel.",
		});
		await f.until(async () => (await f.ctx.domain.decisions.list(documentId)).length === 16, "16 Decisions");
		// One answered: room for one more.
		const [one] = await f.ctx.domain.decisions.list(documentId);
		await f.ctx.domain.decisions.answer(one!.id, { answer: { kind: "written", text: "x" }, by: "bob" });
		await socket.expect("input-result");
		ask("q18", { method: "input", title: "Another" });
		await f.until(async () => (await f.ctx.domain.decisions.list(documentId)).length === 16, "the 18th");
	});

	test("a question in an isolated session fails: it gets no Decisions", async () => {
		const { f, socket, documentId } = await inTurn();
		void f.ctx.planner.runJob(documentId, { prompt: "x" });
		const start = await socket.expect("start");
		socket.send({ type: "started", session: start.session });
		await socket.expect("turn");
		socket.send({
			type: "input-request",
			request: "iq",
			session: start.session,
			input: { method: "input", title: "?" },
		});
		expect(await socket.expect("input-result")).toEqual({
			type: "input-result",
			request: "iq",
			status: "failed",
			message: "Questions are not available in an isolated session: it gets no Decisions.",
		});
		expect(await f.ctx.domain.decisions.list(documentId, { all: true })).toEqual([]);
	});

	test("when the link closes, its open questions' Decisions are withdrawn", async () => {
		const { f, socket, ask, decisionOf, documentId } = await inTurn();
		ask("q1", { method: "confirm", title: "A?", message: "" });
		ask("q2", questionnaire);
		await decisionOf("q1");
		await decisionOf("q2");
		socket.terminate();
		await f.until(() => f.ctx.planner.connections() === 0);
		await f.ctx.planner.settled();
		const all = await f.ctx.domain.decisions.list(documentId, { all: true });
		expect(all.map((d) => [d.requestId, d.status, d.settledReason])).toEqual([
			["q1", "cancelled", "withdrawn"],
			["q2", "cancelled", "withdrawn"],
		]);
	});
});

describe("workflow-stage questions", () => {
	const card = (status: "running" | "paused") => ({
		id: "root",
		name: "Build",
		status,
		started: 1,
		updated: 1,
		stages: [],
		waiting: 1,
	});

	test("an answer is held while the question's root run is paused, and sent once it is not", async () => {
		const { f, socket, turn, ask, decisionOf } = await inTurn();
		const report = (paused: boolean) => ({
			type: "runs",
			session: turn.session,
			active: paused ? [] : ["root"],
			paused: paused ? ["root"] : [],
			cards: [card(paused ? "paused" : "running")],
		});
		socket.send(report(true));
		ask(
			"q1",
			{ method: "confirm", title: "Deploy?", message: "" },
			{ workflowRunId: "stage-run", rootRunId: "root" },
		);
		const decision = await decisionOf("q1");
		await f.ctx.planner.settled();
		await f.ctx.domain.decisions.answer(decision.id, { answer: { kind: "confirm", yes: true }, by: "bob" });
		await f.sync(socket);
		expect(socket.pending.some((m) => m.type === "input-result")).toBe(false);
		socket.send(report(false));
		expect(await socket.nextOf("input-result")).toEqual({
			type: "input-result",
			request: "q1",
			status: "answered",
			value: true,
		});
	});

	test("without rootRunId the workflowRunId is the root", async () => {
		const { f, socket, turn, ask, decisionOf } = await inTurn();
		socket.send({
			type: "runs",
			session: turn.session,
			active: [],
			paused: ["wf"],
			cards: [{ ...card("paused"), id: "wf" }],
		});
		ask("q1", { method: "input", title: "Name?" }, { workflowRunId: "wf" });
		const decision = await decisionOf("q1");
		await f.ctx.planner.settled();
		await f.ctx.domain.decisions.answer(decision.id, { answer: { kind: "written", text: "x" }, by: "bob" });
		await f.sync(socket);
		expect(socket.pending.some((m) => m.type === "input-result")).toBe(false);
		socket.send({
			type: "runs",
			session: turn.session,
			active: ["wf"],
			paused: [],
			cards: [{ ...card("running"), id: "wf" }],
		});
		expect(await socket.nextOf("input-result")).toMatchObject({ request: "q1", value: "x" });
	});
});

export type { AgentSocket };
