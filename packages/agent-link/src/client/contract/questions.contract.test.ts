/**
 * Contract: questions, in Bun and in Node.js. Each method asked and answered, fresh UUID request
 * ids, a question withdrawn and one the members cancelled, every input-result acknowledged with
 * input-received (a repeat too) when resumable-sessions was granted, and none without it, and a
 * question still open when a link without it closes.
 */
import { describe, expect, test } from "bun:test";
import type { Question } from "../../schemas/questions";
import { questions } from "../../testing/examples";
import { CONTRACT_TIMEOUT_MS, RUNTIMES, useContract } from "./harness";
import { attachAndStart, revoke, sendTurn } from "./script";

type Log = { log: Record<string, unknown>[]; closed: Record<string, unknown> };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const ANSWERS: [Question, unknown][] = [
	[
		questions.questionnaire,
		{
			answers: [
				{
					questionIndex: 0,
					question: questions.questionnaire.params.questions[0]!.question,
					kind: "multi",
					answer: null,
					selected: ["PostgreSQL", "SQLite"],
				},
			],
			cancelled: false,
		},
	],
	[questions.confirm, true],
	[questions.select, (questions.select as { choices: string[] }).choices[0]],
	[questions.input, "Ship it on Friday."],
	[questions.editor, "# Notes\n\nWritten by a member."],
];

for (const runtime of RUNTIMES) {
	describe(`questions (${runtime})`, () => {
		const contract = useContract(runtime);

		test(
			"each method is asked with a fresh UUID, answered, and acknowledged with input-received",
			async () => {
				const result = contract.run("serve", {});
				const connection = await attachAndStart(contract.server);
				const block = { index: 2, digest: `sha256:${"0f".repeat(32)}` };
				sendTurn(
					connection,
					ANSWERS.map(([input], i) =>
						i === 0 ? { ask: input, options: { block, workflowRunId: "run-1" } } : { ask: input },
					),
				);
				const requests: string[] = [];
				for (const [i, [input, value]] of ANSWERS.entries()) {
					const request = await connection.expect("input-request");
					expect(request.request).toMatch(UUID);
					expect(request).toMatchObject({
						session: "s1",
						input,
						...(i === 0 ? { block, workflowRunId: "run-1" } : {}),
					});
					requests.push(request.request);
					connection.send({
						type: "input-result",
						request: request.request,
						status: "answered",
						value: value as never,
					});
					expect(await connection.expect("input-received")).toEqual({
						type: "input-received",
						request: request.request,
					});
				}
				expect(new Set(requests).size).toBe(ANSWERS.length);
				await connection.expect("turn-end");
				revoke(connection);
				const turn = ((await result) as Log).log.find((entry) => entry.event === "turn");
				expect(turn?.steps).toEqual(
					ANSWERS.map(([, value], i) => ({
						type: "input-result",
						request: requests[i],
						status: "answered",
						value,
					})),
				);
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"a withdrawn question sends input-cancel and settles cancelled at once; the server's late result is still acknowledged",
			async () => {
				const result = contract.run("serve", {});
				const connection = await attachAndStart(contract.server);
				sendTurn(connection, [{ ask: questions.confirm, cancel: true }, { ask: questions.select }]);
				const asked = await connection.expect("input-request");
				expect(await connection.expect("input-cancel")).toEqual({
					type: "input-cancel",
					request: asked.request,
				});
				const next = await connection.expect("input-request");
				// The withdrawal's own result, and a repeat of it, are acknowledged and otherwise ignored.
				for (let i = 0; i < 2; i++) {
					connection.send({
						type: "input-result",
						request: asked.request,
						status: "cancelled",
						value: false,
					});
					expect(await connection.expect("input-received")).toEqual({
						type: "input-received",
						request: asked.request,
					});
				}
				connection.send({ type: "input-result", request: next.request, status: "cancelled", value: null });
				await connection.expect("input-received");
				await connection.expect("turn-end");
				connection.send({ type: "input-result", request: next.request, status: "answered", value: "late" });
				expect(await connection.expect("input-received")).toEqual({
					type: "input-received",
					request: next.request,
				});
				revoke(connection);
				const turn = ((await result) as Log).log.find((entry) => entry.event === "turn");
				expect(turn?.steps).toEqual([
					{
						type: "input-result",
						request: asked.request,
						status: "cancelled",
						message: "The question was withdrawn.",
						local: true,
					},
					{ type: "input-result", request: next.request, status: "cancelled", value: null },
				]);
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"a failed request settles with the server's message",
			async () => {
				const result = contract.run("serve", {});
				const connection = await attachAndStart(contract.server);
				sendTurn(connection, [{ ask: questions.input }]);
				const asked = await connection.expect("input-request");
				const message = "16 requests are already open on this connection.";
				connection.send({ type: "input-result", request: asked.request, status: "failed", message });
				await connection.expect("input-received");
				await connection.expect("turn-end");
				revoke(connection);
				const turn = ((await result) as Log).log.find((entry) => entry.event === "turn");
				expect(turn?.steps).toEqual([
					{ type: "input-result", request: asked.request, status: "failed", message },
				]);
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"without resumable-sessions nothing is acknowledged, and an open question settles cancelled when the link closes",
			async () => {
				const result = contract.run("serve", { resumable: false });
				const connection = await attachAndStart(contract.server);
				sendTurn(connection, [{ ask: questions.confirm }, { ask: questions.confirm }]);
				const first = await connection.expect("input-request");
				connection.send({ type: "input-result", request: first.request, status: "answered", value: true });
				// No input-received: the next message is the second question.
				await connection.expect("input-request");
				connection.close(1001, "unresponsive");
				const { log, closed } = (await result) as Log;
				expect(closed).toEqual({ code: 1001, reason: "unresponsive" });
				const turn = log.find((entry) => entry.event === "turn");
				expect(turn?.steps).toEqual([
					{ type: "input-result", request: first.request, status: "answered", value: true },
					{
						type: "input-result",
						request: expect.any(String),
						status: "cancelled",
						message: "The link to Chopin closed.",
						local: true,
					},
				]);
				expect(log.at(-1)).toEqual({ event: "destroy", session: "s1" });
			},
			CONTRACT_TIMEOUT_MS,
		);
	});
}
