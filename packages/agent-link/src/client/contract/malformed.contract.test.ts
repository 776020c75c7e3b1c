/**
 * Contract: frames the client cannot parse, in Bun and in Node.js. It closes with 4400
 * malformed-message (Node's WebSocket cannot send 1008) and settles everything still waiting at
 * once: host calls fail, questions settle cancelled, sessions end, and nothing is kept to resume.
 */
import { describe, expect, test } from "bun:test";
import { questions } from "../../testing/examples";
import { CONTRACT_TIMEOUT_MS, RUNTIMES, useContract } from "./harness";
import { attachAndStart, sendTurn } from "./script";

type Log = { log: Record<string, unknown>[]; closed: Record<string, unknown> };

const FRAMES: [string, string | Uint8Array][] = [
	["not JSON", "{not json"],
	["a binary frame", new TextEncoder().encode('{"type":"destroy","session":"s1"}')],
	["an unknown type", JSON.stringify({ type: "nope" })],
	["a field the spec does not list", JSON.stringify({ type: "destroy", session: "s1", extra: 1 })],
	[
		"a message of a feature not granted",
		JSON.stringify({ type: "fork", session: "s2", mode: "planner", from: { session: "s1" } }),
	],
	[
		"attached on a ready link",
		JSON.stringify({ type: "attached", version: 1, document: { id: "d", title: "", repository: "o/r" } }),
	],
];

for (const runtime of RUNTIMES) {
	describe(`malformed frames (${runtime})`, () => {
		const contract = useContract(runtime);

		for (const [name, frame] of FRAMES) {
			test(
				`${name}: the client closes 4400 and settles its waiting host call and question at once`,
				async () => {
					const result = contract.run("serve", {});
					const connection = await attachAndStart(contract.server);
					sendTurn(
						connection,
						[{ parallel: [{ host: { name: "read_plan" } }, { ask: questions.confirm }] }],
						{
							tools: [{ name: "read_plan" }],
						},
					);
					await connection.expect("host-tool-call");
					await connection.expect("input-request");
					connection.sendRaw(frame);
					expect(await connection.closed).toEqual({ code: 4400, reason: "malformed-message" });
					const { log, closed } = (await result) as Log;
					expect(closed).toEqual({
						code: 4400,
						reason: "malformed-message",
						error: { code: "malformed-message", message: expect.any(String), by: "client" },
					});
					const turn = log.find((entry) => entry.event === "turn");
					expect(turn?.steps).toEqual([
						[
							{ output: { error: "The link to Chopin closed." }, isError: true },
							{
								type: "input-result",
								request: expect.any(String),
								status: "cancelled",
								message: "The link to Chopin closed.",
								local: true,
							},
						],
					]);
					expect(log.at(-1)).toEqual({ event: "destroy", session: "s1" });
				},
				CONTRACT_TIMEOUT_MS,
			);
		}

		test(
			"a malformed answer to attach rejects connecting with malformed-message",
			async () => {
				const result = contract.run("connect", {});
				const connection = await contract.server.nextConnection();
				await connection.expect("attach");
				connection.sendRaw(JSON.stringify({ type: "attached", version: 2 }));
				expect(await connection.closed).toEqual({ code: 4400, reason: "malformed-message" });
				expect(((await result) as { error: unknown }).error).toMatchObject({
					name: "LinkError",
					code: "malformed-message",
					closed: { code: 4400, reason: "malformed-message" },
				});
			},
			CONTRACT_TIMEOUT_MS,
		);
	});
}
