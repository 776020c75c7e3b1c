import { expect, test } from "bun:test";
import { splitBlocks } from "../documents/blocks";
import { DocumentService } from "../documents/service";
import { describeStores } from "../store/testing";
import { testDeps } from "../testing/domain";
import { DecisionError } from "./answers";
import { positionCards } from "./placement";
import { DecisionService, type Settlement } from "./service";

async function rejected(promise: Promise<unknown>): Promise<DecisionError> {
	try {
		await promise;
	} catch (error) {
		if (error instanceof DecisionError) return error;
		throw error;
	}
	throw new Error("expected a DecisionError");
}

const SOURCE = "# Plan\n\nStore the data.\n\nShip it.\n\nShip it.\n";

const twoQuestions = {
	method: "questionnaire",
	params: {
		questions: [
			{ question: "Store?", header: "Store", options: [{ label: "SQLite", description: "" }] },
			{ question: "When?", header: "When", options: [{ label: "Now", description: "" }] },
		],
	},
};

describeStores("decisions service", (t) => {
	const setup = async () => {
		const deps = testDeps(t.store);
		const docs = new DocumentService(deps);
		const decisions = new DecisionService(deps);
		const doc = await docs.create({ repository: "a/b", title: "Plan", source: SOURCE, createdBy: "alice" });
		const settled: Settlement[] = [];
		decisions.onSettled((s) => settled.push(s));
		return { deps, docs, decisions, doc, settled };
	};

	test("a question call becomes an open decision, published, with the request's ids", async () => {
		const { deps, decisions, doc } = await setup();
		const decision = await decisions.create(doc.id, {
			request: "r1",
			session: "s1",
			workflowRunId: "run",
			rootRunId: "root",
			input: { method: "confirm", title: "Ship it?", message: "Today" },
		});
		expect(decision).toMatchObject({
			documentId: doc.id,
			seq: 1,
			requestId: "r1",
			session: "s1",
			workflowRunId: "run",
			workflowStageId: null,
			rootRunId: "root",
			question: { method: "confirm", title: "Ship it?", message: "Today" },
			status: "open",
			link: null,
			unlinkedReason: null,
			answers: [],
			result: null,
			version: 0,
		});
		expect(deps.eventsOf("decision.created").map((e) => e.decision.id)).toEqual([decision.id]);
		expect(await decisions.get(decision.id)).toEqual(decision);
		expect(await decisions.findByRequest(doc.id, "r1")).toEqual(decision);
		const repeated = await rejected(
			decisions.create(doc.id, { request: "r1", input: { method: "input", title: "x" } }),
		);
		expect([repeated.code, repeated.status]).toEqual(["request-open", 409]);
	});

	test("bad question calls, and archived or missing documents, make no decision", async () => {
		const { docs, decisions, doc } = await setup();
		for (const input of [
			{ method: "poll", title: "?" },
			{ method: "questionnaire", params: { questions: [] } },
			{ method: "select", title: "x", choices: Array.from({ length: 33 }, (_, i) => `c${i}`) },
			{ method: "confirm", title: "x", message: "y", extra: true },
		]) {
			expect((await rejected(decisions.create(doc.id, { input }))).code).toBe("invalid-question");
		}
		expect(
			(await rejected(decisions.create("nosuchdocumt", { input: { method: "input", title: "x" } }))).status,
		).toBe(404);
		await docs.archive(doc.id);
		expect((await rejected(decisions.create(doc.id, { input: { method: "input", title: "x" } }))).code).toBe(
			"document-archived",
		);
		expect(await decisions.countOpen(doc.id)).toBe(0);
	});

	test("every method answered: the decision settles once with the exact input-result", async () => {
		const { decisions, doc, settled } = await setup();
		const cases = [
			{
				input: { method: "confirm", title: "Ship?", message: "" },
				answer: { kind: "confirm", yes: true },
				value: true,
			},
			{
				input: { method: "confirm", title: "Ship?", message: "" },
				answer: { kind: "confirm", yes: false },
				value: false,
			},
			{
				input: { method: "select", title: "Pick", choices: ["a", "b"] },
				answer: { kind: "choice", choice: "b" },
				value: "b",
			},
			{
				input: { method: "select", title: "Pick", choices: ["a"] },
				answer: { kind: "written", text: "c" },
				value: null,
			},
			{
				input: { method: "input", title: "Name?" },
				answer: { kind: "written", text: "Chopin" },
				value: "Chopin",
			},
			{
				input: { method: "editor", title: "Edit", initial: "x" },
				answer: { kind: "written", text: "y\nz" },
				value: "y\nz",
			},
		];
		for (const [i, c] of cases.entries()) {
			const decision = await decisions.create(doc.id, { request: `r${i}`, input: c.input });
			const after = await decisions.answer(decision.id, { answer: c.answer, by: "bob" });
			expect(after).toMatchObject({
				status: "answered",
				settledReason: "answered",
				settledBy: "bob",
				result: { status: "answered", value: c.value },
			});
			expect(settled.at(-1)).toMatchObject({
				requestId: `r${i}`,
				result: { status: "answered", value: c.value },
			});
		}
		expect(settled).toHaveLength(cases.length);
		const again = await rejected(
			decisions.answer(settled[0]!.decision.id, { answer: { kind: "confirm", yes: false }, by: "carol" }),
		);
		expect([again.code, again.status]).toEqual(["decision-settled", 409]);
	});

	test("a questionnaire settles when its last question is answered, by different members", async () => {
		const { deps, decisions, doc, settled } = await setup();
		const decision = await decisions.create(doc.id, { request: "q", input: twoQuestions });
		const first = await decisions.answer(decision.id, {
			questionIndex: 1,
			answer: { kind: "written", text: "Next week" },
			by: "bob",
		});
		expect([first.status, first.answers.map((a) => [a.questionIndex, a.answeredBy]), settled.length]).toEqual(
			["open", [[1, "bob"]], 0],
		);
		const twice = await rejected(
			decisions.answer(decision.id, {
				questionIndex: 1,
				answer: { kind: "option", label: "Now" },
				by: "carol",
			}),
		);
		expect([twice.code, twice.status]).toEqual(["question-answered", 409]);
		await deps.clock.advance(60_000);
		const done = await decisions.answer(decision.id, {
			answer: { kind: "option", label: "SQLite" },
			by: "carol",
		});
		expect(done).toMatchObject({ status: "answered", settledBy: "carol", settledAt: deps.clock.now() });
		expect(settled.map((s) => s.result)).toEqual([
			{
				status: "answered",
				value: {
					answers: [
						{ questionIndex: 0, question: "Store?", kind: "option", answer: "SQLite" },
						{ questionIndex: 1, question: "When?", kind: "custom", answer: "Next week" },
					],
					cancelled: false,
				},
			},
		]);
		expect(deps.eventsOf("decision.updated").map((e) => e.decision.version)).toEqual([1, 2]);
	});

	test("a member cancels one question: the questionnaire keeps the others' answers", async () => {
		const { decisions, doc, settled } = await setup();
		const three = {
			method: "questionnaire",
			params: {
				questions: [0, 1, 2].map((i) => ({
					question: `Q${i}`,
					header: "",
					options: [{ label: "yes", description: "" }],
				})),
			},
		};
		const decision = await decisions.create(doc.id, { request: "q", input: three });
		await decisions.answer(decision.id, {
			questionIndex: 0,
			answer: { kind: "option", label: "yes" },
			by: "bob",
		});
		const refused = await rejected(decisions.cancelQuestion(decision.id, { questionIndex: 0, by: "carol" }));
		expect(refused.code).toBe("question-answered");
		const cancelled = await decisions.cancelQuestion(decision.id, { questionIndex: 2, by: "carol" });
		expect(cancelled).toMatchObject({
			status: "cancelled",
			settledReason: "cancelled-by-member",
			settledBy: "carol",
		});
		expect(settled.map((s) => s.result)).toEqual([
			{
				status: "cancelled",
				value: {
					answers: [{ questionIndex: 0, question: "Q0", kind: "option", answer: "yes" }],
					cancelled: true,
				},
			},
		]);
		const confirm = await decisions.create(doc.id, { input: { method: "confirm", title: "?", message: "" } });
		await decisions.cancelQuestion(confirm.id, { by: "bob" });
		expect(settled.at(-1)!.result).toEqual({ status: "cancelled", value: false });
	});

	test("withdraw: cancelled with empty answers, once; by request and by session", async () => {
		const { decisions, doc, settled } = await setup();
		const q = await decisions.create(doc.id, { request: "r1", session: "s1", input: twoQuestions });
		await decisions.answer(q.id, { answer: { kind: "option", label: "SQLite" }, by: "bob" });
		const withdrawn = await decisions.withdraw(q.id);
		expect(withdrawn).toMatchObject({
			status: "cancelled",
			settledReason: "withdrawn",
			settledBy: null,
			result: { status: "cancelled", value: { answers: [], cancelled: true } },
		});
		expect(await decisions.withdraw(q.id)).toBeNull();
		const select = await decisions.create(doc.id, {
			request: "r2",
			session: "s1",
			input: { method: "select", title: "", choices: [] },
		});
		const input = await decisions.create(doc.id, {
			request: "r3",
			session: "s1",
			input: { method: "input", title: "" },
		});
		const other = await decisions.create(doc.id, {
			request: "r4",
			session: "s2",
			input: { method: "editor", title: "" },
		});
		expect([await decisions.countOpen(doc.id), await decisions.countOpen(doc.id, { session: "s1" })]).toEqual(
			[3, 2],
		);
		expect((await decisions.withdrawRequest(doc.id, "r2"))?.id).toBe(select.id);
		expect(await decisions.withdrawRequest(doc.id, "nope")).toBeNull();
		expect((await decisions.withdrawOpen(doc.id, { session: "s1" })).map((d) => d.id)).toEqual([input.id]);
		expect((await decisions.listOpen(doc.id)).map((d) => d.id)).toEqual([other.id]);
		expect(settled.map((s) => [s.requestId, s.result.status, s.result.value])).toEqual([
			["r1", "cancelled", { answers: [], cancelled: true }],
			["r2", "cancelled", null],
			["r3", "cancelled", null],
		]);
		expect((await decisions.list(doc.id, { all: true })).map((d) => d.seq)).toEqual([1, 2, 3, 4]);
	});

	test("members answering at once settle the decision exactly once", async () => {
		const { decisions, doc, settled } = await setup();
		for (let round = 0; round < 5; round++) {
			const decision = await decisions.create(doc.id, { input: twoQuestions });
			const results = await Promise.allSettled([
				decisions.answer(decision.id, {
					questionIndex: 0,
					answer: { kind: "option", label: "SQLite" },
					by: "bob",
				}),
				decisions.answer(decision.id, {
					questionIndex: 1,
					answer: { kind: "option", label: "Now" },
					by: "carol",
				}),
				decisions.answer(decision.id, {
					questionIndex: 1,
					answer: { kind: "written", text: "Later" },
					by: "dan",
				}),
			]);
			const refusals = results
				.filter((r) => r.status === "rejected")
				.map((r) => (r as PromiseRejectedResult).reason.code);
			expect(refusals).toHaveLength(1);
			expect(["question-answered", "decision-settled"]).toContain(refusals[0]);
			const final = await decisions.get(decision.id);
			expect(final.status).toBe("answered");
			expect(final.answers).toHaveLength(2);
		}
		expect(settled).toHaveLength(5);
		// An answer racing a withdraw: one of them settles it, never both.
		for (let round = 0; round < 5; round++) {
			const confirm = await decisions.create(doc.id, {
				input: { method: "confirm", title: "?", message: "" },
			});
			await Promise.allSettled([
				decisions.answer(confirm.id, { answer: { kind: "confirm", yes: true }, by: "bob" }),
				decisions.withdraw(confirm.id),
			]);
		}
		expect(settled).toHaveLength(10);
	});

	test("placement: after the named block, else at the end with the reason", async () => {
		const { docs, decisions, doc } = await setup();
		const blocks = doc.blocks;
		const ask = (block?: { index: number; digest: string }) =>
			decisions.create(doc.id, { input: { method: "input", title: "?" }, ...(block && { block }) });
		const linked = await ask({ index: 1, digest: `sha256:${blocks[1]!.digest.slice(7).toUpperCase()}` });
		expect([linked.link, linked.unlinkedReason]).toEqual([{ index: 1, digest: blocks[1]!.digest }, null]);
		const stale = await ask({ index: 1, digest: blocks[0]!.digest });
		expect([stale.link, stale.unlinkedReason]).toEqual([null, "changed"]);
		const gone = await ask({ index: 9, digest: blocks[0]!.digest });
		expect(gone.unlinkedReason).toBe("changed");
		// "Ship it." appears twice: naming either is ambiguous.
		const repeated = await ask({ index: 2, digest: blocks[2]!.digest });
		expect([repeated.link, repeated.unlinkedReason]).toEqual([null, "repeated"]);
		const plain = await ask();
		expect([plain.link, plain.unlinkedReason]).toEqual([null, null]);

		const open = await decisions.list(doc.id);
		expect(positionCards(splitBlocks(SOURCE), open)).toEqual([
			{ decisionId: linked.id, afterBlock: 1 },
			{ decisionId: stale.id, afterBlock: null },
			{ decisionId: gone.id, afterBlock: null },
			{ decisionId: repeated.id, afterBlock: null },
			{ decisionId: plain.id, afterBlock: null },
		]);
		// An edit above moves the block: the card follows it by its digest.
		const moved = await docs.updateSource(doc.id, { source: `Intro.\n\n${SOURCE}`, expectedRevision: 0 });
		expect(positionCards(moved.blocks, [linked])).toEqual([{ decisionId: linked.id, afterBlock: 2 }]);
		// Once the block itself changes, the card goes to the end.
		const edited = await docs.updateSource(doc.id, {
			source: SOURCE.replace("Store", "Keep"),
			expectedRevision: 1,
		});
		expect(positionCards(edited.blocks, [linked])).toEqual([{ decisionId: linked.id, afterBlock: null }]);
	});
});
