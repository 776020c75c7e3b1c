/**
 * Contract: sessions and turns, in Bun and in Node.js. start and start-failed, text and
 * reasoning parts, own tools, host tools answered and failed, abort, steer, stop and resume,
 * destroy, and the rule that every turn gets exactly one turn-end.
 */
import { describe, expect, test } from "bun:test";
import { codePointLength } from "../../text";
import { CONTRACT_TIMEOUT_MS, RUNTIMES, useContract } from "./harness";
import { attachAndStart, revoke, sendTurn, untilTurnEnd } from "./script";

type Log = { log: Record<string, unknown>[]; closed: Record<string, unknown> };

for (const runtime of RUNTIMES) {
	describe(`turns (${runtime})`, () => {
		const contract = useContract(runtime);

		test(
			"a turn streams text and reasoning, and resolving without end() ends it finished",
			async () => {
				const result = contract.run("serve", {});
				const connection = await attachAndStart(contract.server);
				sendTurn(connection, [{ text: "Hello" }, { reasoning: "Because." }], { model: "gpt-5.1" });
				expect(await untilTurnEnd(connection)).toEqual([
					{ type: "text-start", id: "text-1" },
					{ type: "text-delta", id: "text-1", delta: "Hello" },
					{ type: "text-end", id: "text-1" },
					{ type: "reasoning-start", id: "reasoning-2" },
					{ type: "reasoning-delta", id: "reasoning-2", delta: "Because." },
					{ type: "reasoning-end", id: "reasoning-2" },
					{ type: "turn-end", session: "s1", turn: "t1", status: "finished" },
				]);
				revoke(connection);
				const { log } = (await result) as Log;
				expect(log).toContainEqual(
					expect.objectContaining({
						event: "turn",
						turn: "t1",
						model: "gpt-5.1",
						steps: ["text", "reasoning"],
					}),
				);
				expect(log.at(-1)).toEqual({ event: "destroy", session: "s1" });
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"a start that throws answers start-failed with its message cut to 4000 characters",
			async () => {
				const result = contract.run("serve", { startFails: "é".repeat(5000) });
				const connection = await contract.server.nextConnection();
				await connection.attach();
				connection.send({ type: "start", session: "s1", mode: "isolated" });
				const failed = await connection.expect("start-failed");
				expect(codePointLength(failed.message)).toBe(4000);
				connection.send({ type: "destroy", session: "s1" });
				revoke(connection);
				expect(((await result) as Log).log).toEqual([
					{ event: "start", session: "s1", mode: "isolated" },
					{ event: "destroy", session: "s1" },
				]);
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"a handler that throws ends the turn failed; end() twice throws and sends one turn-end",
			async () => {
				const result = contract.run("serve", {});
				const connection = await attachAndStart(contract.server);
				sendTurn(connection, [{ text: "Partly" }, { throw: "The model provider is unavailable." }]);
				expect((await untilTurnEnd(connection)).at(-1)).toEqual({
					type: "turn-end",
					session: "s1",
					turn: "t1",
					status: "failed",
					message: "The model provider is unavailable.",
				});
				sendTurn(connection, [{ endTwice: true }], { turn: "t2" });
				expect(await connection.expect("turn-end")).toEqual({
					type: "turn-end",
					session: "s1",
					turn: "t2",
					status: "finished",
				});
				// Had a second turn-end gone out, it would come before this turn's parts.
				sendTurn(connection, [{ text: "Third" }], { turn: "t3" });
				expect(await connection.expect("part")).toMatchObject({ turn: "t3" });
				await untilTurnEnd(connection);
				revoke(connection);
				const turns = ((await result) as Log).log.filter((entry) => entry.event === "turn");
				expect(turns[1]?.steps).toEqual([expect.objectContaining({ name: "LinkError", code: "turn-ended" })]);
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"a turn for a session the client does not hold is answered turn-end failed",
			async () => {
				const result = contract.run("serve", {});
				const connection = await attachAndStart(contract.server);
				sendTurn(connection, [{ text: "x" }], { session: "s9" });
				expect(await connection.expect("turn-end")).toMatchObject({
					session: "s9",
					turn: "t1",
					status: "failed",
				});
				revoke(connection);
				await result;
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"own tools: tools declared, then a tool-call with providerExecuted and its tool-result, a structured error too",
			async () => {
				const result = contract.run("serve", {});
				const connection = await attachAndStart(contract.server);
				const failure = {
					error: { code: "no-repository-credential", message: "No credential for the repository." },
				};
				sendTurn(connection, [
					{ declare: ["run_tests"] },
					{ ownTool: { name: "run_tests", input: { filter: "unit" }, result: { passed: 12 } } },
					{ ownTool: { name: "run_tests", result: failure, isError: true } },
				]);
				expect(await connection.expect("tools")).toEqual({
					type: "tools",
					session: "s1",
					turn: "t1",
					names: ["run_tests"],
				});
				const [call, done, call2, failed, end] = await untilTurnEnd(connection);
				expect(call).toMatchObject({
					type: "tool-call",
					toolName: "run_tests",
					input: '{"filter":"unit"}',
					providerExecuted: true,
				});
				expect(done).toEqual({
					type: "tool-result",
					toolCallId: (call as { toolCallId: string }).toolCallId,
					toolName: "run_tests",
					result: { passed: 12 },
				});
				expect((call2 as { toolCallId: string }).toolCallId).not.toBe(
					(call as { toolCallId: string }).toolCallId,
				);
				expect(failed).toMatchObject({ type: "tool-result", result: failure, isError: true });
				expect(end).toMatchObject({ type: "turn-end", status: "finished" });
				revoke(connection);
				await result;
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"host tool calls get unique ids and settle with the server's result, a failed one too",
			async () => {
				const result = contract.run("serve", {});
				const connection = await attachAndStart(contract.server);
				const tools = [{ name: "read_plan" }, { name: "edit_plan" }];
				sendTurn(
					connection,
					[{ host: { name: "read_plan", input: { offset: 1 } } }, { host: { name: "edit_plan" } }],
					{ tools },
				);
				const first = await connection.expect("host-tool-call");
				expect(first).toMatchObject({
					session: "s1",
					turn: "t1",
					toolName: "read_plan",
					input: '{"offset":1}',
				});
				connection.send({
					type: "host-tool-result",
					session: "s1",
					turn: "t1",
					toolCallId: first.toolCallId,
					output: "revision: 3",
				});
				const second = await connection.expect("host-tool-call");
				expect(second.toolCallId).not.toBe(first.toolCallId);
				connection.send({
					type: "host-tool-result",
					session: "s1",
					turn: "t1",
					toolCallId: second.toolCallId,
					output: { error: "The block has changed." },
					isError: true,
				});
				expect(await connection.expect("turn-end")).toMatchObject({ status: "finished" });
				revoke(connection);
				const turn = ((await result) as Log).log.find((entry) => entry.event === "turn");
				expect(turn?.steps).toEqual([
					{ output: "revision: 3", isError: false },
					{ output: { error: "The block has changed." }, isError: true },
				]);
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"abort settles a waiting host call as failed, aborts the signal, and ends the turn aborted",
			async () => {
				const result = contract.run("serve", {});
				const connection = await attachAndStart(contract.server);
				sendTurn(connection, [{ host: { name: "read_plan" } }, { waitAbort: true }], {
					tools: [{ name: "read_plan" }],
				});
				await connection.expect("host-tool-call");
				connection.send({ type: "abort", session: "s1", turn: "t1" });
				expect(await connection.expect("turn-end")).toEqual({
					type: "turn-end",
					session: "s1",
					turn: "t1",
					status: "aborted",
				});
				revoke(connection);
				const turn = ((await result) as Log).log.find((entry) => entry.event === "turn");
				expect(turn?.steps).toEqual([
					{ output: { error: "The turn was aborted." }, isError: true },
					"aborted",
				]);
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"steer reaches the running turn's handler; one for an ended turn is refused",
			async () => {
				const result = contract.run("serve", { steer: { ok: true } });
				const connection = await contract.server.nextConnection();
				expect(connection.requested).toContain("steer-turn");
				await connection.attach();
				connection.send({ type: "start", session: "s1", mode: "planner" });
				await connection.expect("started");
				sendTurn(connection, [{ waitAbort: true }]);
				connection.send({
					type: "steer",
					request: "st-1",
					session: "s1",
					turn: "t1",
					prompt: "@bo: shorter",
				});
				expect(await connection.expect("control-result")).toEqual({
					type: "control-result",
					request: "st-1",
					ok: true,
				});
				connection.send({ type: "abort", session: "s1", turn: "t1" });
				await connection.expect("turn-end");
				connection.send({
					type: "steer",
					request: "st-2",
					session: "s1",
					turn: "t1",
					prompt: "@bo: too late",
				});
				expect(await connection.expect("control-result")).toEqual({
					type: "control-result",
					request: "st-2",
					ok: false,
					message: "The turn has ended.",
				});
				revoke(connection);
				expect(((await result) as Log).log).toContainEqual({
					event: "steer",
					turn: "t1",
					prompt: "@bo: shorter",
				});
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"stop and resume are answered with the handler's control-result; a stop for an unknown session is refused",
			async () => {
				const result = contract.run("serve", { control: { ok: false, message: "The run has ended." } });
				const connection = await attachAndStart(contract.server);
				connection.send({ type: "stop", request: "c1", session: "s1", run: "run-1" });
				expect(await connection.expect("control-result")).toEqual({
					type: "control-result",
					request: "c1",
					ok: false,
					message: "The run has ended.",
				});
				connection.send({ type: "resume", request: "c2", session: "s1" });
				expect(await connection.expect("control-result")).toMatchObject({ request: "c2", ok: false });
				connection.send({ type: "stop", request: "c3", session: "s9" });
				expect(await connection.expect("control-result")).toMatchObject({ request: "c3", ok: false });
				revoke(connection);
				const { log } = (await result) as Log;
				expect(log).toContainEqual({ event: "stop", session: "s1", run: "run-1" });
				expect(log).toContainEqual({ event: "resume", session: "s1" });
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"destroy ends the session: its turn is abandoned without a turn-end and destroy is called",
			async () => {
				const result = contract.run("serve", {});
				const connection = await attachAndStart(contract.server);
				sendTurn(connection, [{ host: { name: "read_plan" } }, { text: "after" }], {
					tools: [{ name: "read_plan" }],
				});
				await connection.expect("host-tool-call");
				connection.send({ type: "destroy", session: "s1" });
				sendTurn(connection, [{ text: "x" }], { turn: "t2" });
				// The abandoned turn sends nothing more; the next message answers t2.
				expect(await connection.expect("turn-end")).toMatchObject({ turn: "t2", status: "failed" });
				revoke(connection);
				const { log } = (await result) as Log;
				const turn = log.find((entry) => entry.event === "turn");
				expect(turn?.steps).toEqual([{ output: { error: "The session ended." }, isError: true }]);
				expect(turn?.error).toMatchObject({ code: "turn-ended" });
				expect(log.filter((entry) => entry.event === "destroy")).toEqual([
					{ event: "destroy", session: "s1" },
				]);
			},
			CONTRACT_TIMEOUT_MS,
		);
	});
}
