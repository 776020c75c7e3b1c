import { afterEach, beforeEach, expect, test } from "bun:test";
import { describeStores } from "../store/testing";
import { type ApiServer, createDocument, json, startApiServer } from "../testing/api-server";
import type { Settlement } from "./service";

const questionnaire = {
	method: "questionnaire",
	params: {
		questions: [
			{
				question: "Which store?\n\n- SQLite\n- PostgreSQL",
				header: "Store",
				options: [
					{ label: "SQLite", description: "embedded" },
					{ label: "PostgreSQL", description: "a server" },
				],
			},
			{ question: "Why?", header: "Reason", options: [] },
		],
	},
};

describeStores("Decisions API", (t) => {
	let api: ApiServer;
	let settled: Settlement[];
	beforeEach(async () => {
		api = await startApiServer(t.store);
		settled = [];
		api.server.context.domain.decisions.onSettled((s) => settled.push(s));
	});
	afterEach(async () => {
		await api.stop();
	});

	const ask = async (id: string, input: unknown = questionnaire, who: "alice" | "carol" = "alice") =>
		api.call(who, "POST", `/api/documents/${id}/decisions`, { input });

	test("a writer asks; members answer each question, and the decision settles with the spec's result", async () => {
		const id = await createDocument(api);
		const created = await ask(id);
		expect(created.status).toBe(201);
		const { decision } = (await created.json()) as {
			decision: { id: string; status: string; link: unknown };
		};
		expect(decision).toMatchObject({ status: "open", link: null });

		const first = await api.call("carol", "POST", `/api/decisions/${decision.id}/answer`, {
			questionIndex: 0,
			answer: { kind: "option", label: "SQLite" },
		});
		expect(first.status).toBe(200);
		expect(((await first.json()) as { decision: { status: string } }).decision.status).toBe("open");
		const second = await api.call("bob", "POST", `/api/decisions/${decision.id}/answer`, {
			questionIndex: 1,
			answer: { kind: "written", text: "It is one file." },
		});
		const done = (await second.json()) as { decision: { status: string; settledBy: string } };
		expect(done.decision).toMatchObject({ status: "answered", settledBy: "bob" });
		expect(settled.map((s) => s.result)).toEqual([
			{
				status: "answered",
				value: {
					answers: [
						{
							questionIndex: 0,
							question: questionnaire.params.questions[0]!.question,
							kind: "option",
							answer: "SQLite",
						},
						{ questionIndex: 1, question: "Why?", kind: "custom", answer: "It is one file." },
					],
					cancelled: false,
				},
			},
		]);

		const listed = await json(await api.call("carol", "GET", `/api/documents/${id}/decisions`));
		expect((listed.decisions as { id: string; status: string }[]).map((d) => [d.id, d.status])).toEqual([
			[decision.id, "answered"],
		]);
		const again = await api.call("carol", "POST", `/api/decisions/${decision.id}/answer`, {
			questionIndex: 0,
			answer: { kind: "option", label: "PostgreSQL" },
		});
		expect(again.status).toBe(409);
		expect((await json(again)).code).toBe("decision-settled");
	});

	test("every kind of question takes its kind of answer", async () => {
		const id = await createDocument(api);
		const answers: [unknown, unknown, unknown][] = [
			[{ method: "confirm", title: "Ship?", message: "Now." }, { kind: "confirm", yes: true }, true],
			[{ method: "select", title: "Region", choices: ["eu", "us"] }, { kind: "choice", choice: "eu" }, "eu"],
			[{ method: "select", title: "Region", choices: ["eu"] }, { kind: "written", text: "asia" }, null],
			[{ method: "input", title: "Name" }, { kind: "written", text: "score" }, "score"],
			[{ method: "editor", title: "Notes", initial: "x" }, { kind: "written", text: "" }, ""],
			[
				{
					method: "questionnaire",
					params: {
						questions: [
							{
								question: "Q",
								header: "H",
								multiSelect: true,
								options: [
									{ label: "a", description: "" },
									{ label: "b", description: "" },
								],
							},
						],
					},
				},
				{ kind: "multi", labels: ["b", "a"] },
				{
					answers: [{ questionIndex: 0, question: "Q", kind: "multi", answer: null, selected: ["a", "b"] }],
					cancelled: false,
				},
			],
		];
		for (const [input, answer, value] of answers) {
			const { decision } = (await (await ask(id, input)).json()) as { decision: { id: string } };
			const res = await api.call("carol", "POST", `/api/decisions/${decision.id}/answer`, { answer });
			expect(res.status).toBe(200);
			expect(((await res.json()) as { decision: { result: unknown } }).decision.result).toEqual({
				status: "answered",
				value,
			});
		}
	});

	test("a member cancels a question; the answered ones stay in the result", async () => {
		const id = await createDocument(api);
		const { decision } = (await (await ask(id)).json()) as { decision: { id: string } };
		await api.call("carol", "POST", `/api/decisions/${decision.id}/answer`, {
			answer: { kind: "option", label: "SQLite" },
		});
		const res = await api.call("carol", "POST", `/api/decisions/${decision.id}/cancel`, { questionIndex: 1 });
		expect(res.status).toBe(200);
		const view = (
			(await res.json()) as {
				decision: {
					status: string;
					settledReason: string;
					result: { value: { answers: unknown[]; cancelled: boolean } };
				};
			}
		).decision;
		expect(view.status).toBe("cancelled");
		expect(view.settledReason).toBe("cancelled-by-member");
		expect(view.result.value.cancelled).toBe(true);
		expect(view.result.value.answers).toHaveLength(1);
	});

	test("refusals have their codes, and a stranger cannot tell a decision exists", async () => {
		const id = await createDocument(api);
		const { decision } = (await (await ask(id)).json()) as { decision: { id: string } };
		const answer = (who: "carol" | "dave" | null, body: unknown, target = decision.id) =>
			api.call(who, "POST", `/api/decisions/${target}/answer`, body);
		const cases: [Response, number, string][] = [
			[await ask(id, questionnaire, "carol"), 403, "repository-forbidden"],
			[await ask(id, { method: "nope" }), 400, "invalid-request"],
			[await api.call("dave", "GET", `/api/documents/${id}/decisions`), 404, "document-not-found"],
			[await answer("dave", { answer: { kind: "option", label: "SQLite" } }), 404, "decision-not-found"],
			[
				await answer("carol", { answer: { kind: "option", label: "SQLite" } }, "aaaaaaaaaaaa"),
				404,
				"decision-not-found",
			],
			[await answer(null, { answer: { kind: "option", label: "SQLite" } }), 401, "sign-in-required"],
			[await answer("carol", { answer: { kind: "option", label: "MySQL" } }), 400, "invalid-answer"],
			[await answer("carol", { answer: { kind: "telepathy" } }), 400, "invalid-request"],
			[
				await answer("carol", { questionIndex: 5, answer: { kind: "written", text: "x" } }),
				400,
				"invalid-answer",
			],
			[
				await api.call("carol", "POST", `/api/decisions/${decision.id}/cancel`, { questionIndex: 9 }),
				400,
				"invalid-answer",
			],
		];
		for (const [res, status, code] of cases) {
			expect({ status: res.status, code: (await json(res)).code }).toEqual({ status, code });
		}
		await answer("carol", { answer: { kind: "option", label: "SQLite" } });
		const twice = await answer("carol", { answer: { kind: "option", label: "PostgreSQL" } });
		expect((await json(twice)).code).toBe("question-answered");
		await api.call("alice", "POST", `/api/documents/${id}/archive`);
		const archived = await ask(id);
		expect(archived.status).toBe(409);
		expect((await json(archived)).code).toBe("document-archived");
	});
});
