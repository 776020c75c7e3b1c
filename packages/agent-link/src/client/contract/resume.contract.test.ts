/**
 * Contract: resuming after a dropped socket, in Bun and in Node.js. The server drops; the client
 * connects again with closed.resume and sends resume first; resumed gives sessions back (the
 * others end); redelivered results are acknowledged and held stops answered. A refusal with
 * retry keeps everything for the next attempt; any other ends it.
 */
import { describe, expect, test } from "bun:test";
import { questions } from "../../testing/examples";
import { CONTRACT_TIMEOUT_MS, RUNTIMES, useContract } from "./harness";
import { start } from "./script";
import type { ScriptedConnection } from "./scripted-server";

type Outcome = {
	log: Record<string, unknown>[];
	results?: Record<string, unknown>[];
	error?: Record<string, unknown>;
	closed?: Record<string, unknown>;
	usable?: boolean;
	held?: unknown;
};

for (const runtime of RUNTIMES) {
	describe(`resume (${runtime})`, () => {
		const contract = useContract(runtime);

		/** Two sessions each waiting on a question, then a dropped socket. */
		async function dropWithTwoQuestions(): Promise<{ r1: string; r2: string }> {
			const connection = await contract.server.nextConnection();
			await connection.attach();
			connection.send({ type: "start", session: "s1", mode: "planner" });
			connection.send({ type: "start", session: "s2", mode: "planner" });
			// The backend asks once both started; a session's question never precedes its started.
			const seen = [
				await connection.next(),
				await connection.next(),
				await connection.next(),
				await connection.next(),
			];
			const order = seen.map((message) => `${message.type} ${"session" in message ? message.session : ""}`);
			expect(order.indexOf("started s2")).toBeLessThan(order.indexOf("input-request s2"));
			expect(order.indexOf("started s1")).toBeLessThan(order.indexOf("input-request s1"));
			const request = (session: string) =>
				seen.find((message) => message.type === "input-request" && message.session === session) as {
					request: string;
				};
			connection.terminate();
			return { r1: request("s1").request, r2: request("s2").request };
		}

		async function reattach(): Promise<ScriptedConnection> {
			const connection = await contract.server.nextConnection();
			await connection.attach();
			return connection;
		}

		test(
			"resume comes first; resumed gives sessions back, the rest end; redelivered results are acknowledged; held stops answered",
			async () => {
				const result = contract.run("resume", {
					sessions: 2,
					question: questions.confirm,
					cancelWhileDown: 1,
				});
				const { r1, r2 } = await dropWithTwoQuestions();
				const connection = await reattach();
				// The question withdrawn while the link was down is not named.
				expect(await connection.expect("resume")).toEqual({
					type: "resume",
					sessions: [
						{ session: "s1", requests: [r1] },
						{ session: "s2", requests: [] },
					],
				});
				connection.send({ type: "resumed", sessions: [{ session: "s1", requests: [r1] }] });
				connection.send({ type: "input-result", request: r1, status: "answered", value: true });
				expect(await connection.expect("input-received")).toEqual({ type: "input-received", request: r1 });
				connection.send({ type: "stop", request: "held-stop", session: "s1" });
				expect(await connection.expect("control-result")).toEqual({
					type: "control-result",
					request: "held-stop",
					ok: true,
				});
				connection.close(1001, "unresponsive");

				const outcome = (await result) as Outcome;
				expect(outcome.log.find((entry) => entry.event === "closed")).toEqual({
					event: "closed",
					closed: {
						code: 1006,
						reason: "",
						resume: {
							sessions: [
								{ session: "s1", requests: [r1] },
								{ session: "s2", requests: [r2] },
							],
						},
					},
				});
				expect(outcome.results).toEqual([
					{ type: "input-result", request: r1, status: "answered", value: true },
					{
						type: "input-result",
						request: r2,
						status: "cancelled",
						message: "The question was withdrawn.",
						local: true,
					},
				]);
				expect(outcome.log.filter((entry) => entry.event === "destroy")).toEqual([
					{ event: "destroy", session: "s2" },
				]);
				expect(outcome.log).toContainEqual({ event: "stop", session: "s1" });
				expect(outcome.log).toContainEqual({ event: "resumed", sessions: ["s1"] });
				// The resume was used; this link's own drop gives a new one, with the session it still holds.
				expect(outcome.usable).toBe(false);
				expect(outcome.closed).toEqual({
					code: 1001,
					reason: "unresponsive",
					resume: { sessions: [{ session: "s1", requests: [] }] },
				});
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"a question asked while the link is down is sent once the session is resumed",
			async () => {
				const result = contract.run("resume", { question: questions.confirm, askWhileDown: questions.input });
				const first = await contract.server.nextConnection();
				await first.attach();
				await start(first, "s1");
				const r1 = (await first.expect("input-request")).request;
				first.terminate();
				const connection = await reattach();
				expect(await connection.expect("resume")).toEqual({
					type: "resume",
					sessions: [{ session: "s1", requests: [r1] }],
				});
				connection.send({ type: "resumed", sessions: [{ session: "s1", requests: [] }] });
				const late = await connection.expect("input-request");
				expect(late).toMatchObject({ session: "s1", input: questions.input });
				connection.send({ type: "input-result", request: late.request, status: "answered", value: "Later." });
				await connection.expect("input-received");
				connection.close(1001, "unresponsive");
				const outcome = (await result) as Outcome;
				expect(outcome.results).toEqual([
					// Chopin no longer held the first question when the session came back.
					{
						type: "input-result",
						request: r1,
						status: "cancelled",
						message: "Chopin no longer holds this question.",
						local: true,
					},
					{ type: "input-result", request: late.request, status: "answered", value: "Later." },
				]);
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"a definitive refusal of the resume ends its sessions: questions cancelled, destroy called",
			async () => {
				const result = contract.run("resume", { sessions: 2, question: questions.confirm });
				await dropWithTwoQuestions();
				const connection = await reattach();
				await connection.expect("resume");
				const message =
					"octocat is connected to this document. A document has one agent connected at a time.";
				connection.send({ type: "refused", code: "planner-attached", message });
				connection.close(4409, "planner-attached");
				const outcome = (await result) as Outcome;
				expect(outcome.error).toMatchObject({
					name: "Refused",
					code: "planner-attached",
					retry: false,
					message,
				});
				expect(outcome.usable).toBe(false);
				expect(outcome.results?.map((entry) => [entry.status, entry.local])).toEqual([
					["cancelled", true],
					["cancelled", true],
				]);
				expect(outcome.log.filter((entry) => entry.event === "destroy")).toEqual([
					{ event: "destroy", session: "s1" },
					{ event: "destroy", session: "s2" },
				]);
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"a refusal with retry keeps the sessions and their questions for the same resume",
			async () => {
				const result = contract.run("resume", { question: questions.confirm });
				const first = await contract.server.nextConnection();
				await first.attach();
				await start(first, "s1");
				const r1 = (await first.expect("input-request")).request;
				first.close(1011, "unavailable");
				const connection = await reattach();
				await connection.expect("resume");
				connection.send({
					type: "refused",
					code: "unavailable",
					message: "GitHub is unavailable.",
					retry: true,
				});
				connection.close(1011, "unavailable");
				const outcome = (await result) as Outcome;
				expect(outcome.error).toMatchObject({ name: "Refused", code: "unavailable", retry: true });
				expect(outcome.usable).toBe(true);
				expect(outcome.held).toEqual([{ session: "s1", requests: [r1] }]);
				expect(outcome.log.some((entry) => entry.event === "destroy")).toBe(false);
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"a server that does not grant resumable-sessions on the new link resumes nothing: the sessions end",
			async () => {
				const result = contract.run("resume", { question: questions.confirm });
				const first = await contract.server.nextConnection();
				await first.attach();
				await start(first, "s1");
				await first.expect("input-request");
				first.terminate();
				const connection = await contract.server.nextConnection();
				await connection.attach(["run-stage-deltas"]);
				connection.close(1001, "unresponsive");
				const done = (await result) as Outcome;
				// The client settled everything at once, without sending resume.
				expect(connection.frames.map((frame) => ("message" in frame ? frame.message.type : "error"))).toEqual(
					["attach"],
				);
				expect(done.results).toEqual([
					{
						type: "input-result",
						request: expect.any(String),
						status: "cancelled",
						message: "The server did not grant resumable-sessions, so nothing was resumed.",
						local: true,
					},
				]);
				expect(done.log.filter((entry) => entry.event === "destroy")).toEqual([
					{ event: "destroy", session: "s1" },
				]);
			},
			CONTRACT_TIMEOUT_MS,
		);
	});
}
