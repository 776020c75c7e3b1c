/**
 * Contract: the restart-notice rule, in Bun and in Node.js. restarting then 1012: the caller's
 * reconnectAgent connects again at once, retries the same resume every 250 ms while the new
 * process refuses with retry, until reconnectWithinMs has passed since the close, then on its
 * own backoff. Time is the scenario's ManualClock, which it advances itself.
 */
import { describe, expect, test } from "bun:test";
import { questions } from "../../testing/examples";
import { CONTRACT_TIMEOUT_MS, RUNTIMES, useContract } from "./harness";
import { start } from "./script";
import type { ScriptedServer } from "./scripted-server";

type Outcome = {
	log: Record<string, unknown>[];
	results: Record<string, unknown>[];
	closed: Record<string, unknown>;
};

/** One connection that attaches, expects the resume, and refuses it with retry (or resumes it). */
async function answerResume(server: ScriptedServer, expected: unknown, resume: boolean): Promise<void> {
	const connection = await server.nextConnection();
	await connection.attach();
	expect(await connection.expect("resume")).toEqual(expected as never);
	if (!resume) {
		connection.send({
			type: "refused",
			code: "unavailable",
			message: "The sign-in is not back yet.",
			retry: true,
		});
		connection.close(1011, "unavailable");
		return;
	}
	const [{ session, requests }] = (expected as { sessions: { session: string; requests: string[] }[] })
		.sessions as [{ session: string; requests: string[] }];
	connection.send({ type: "resumed", sessions: [{ session, requests }] });
	connection.send({ type: "input-result", request: requests[0]!, status: "answered", value: true });
	expect(await connection.expect("input-received")).toEqual({
		type: "input-received",
		request: requests[0]!,
	});
	await connection.expect("detach");
}

for (const runtime of RUNTIMES) {
	describe(`restart (${runtime})`, () => {
		const contract = useContract(runtime);

		async function restartWith(reconnectWithinMs: number, refusals: number, backoffMs: number) {
			const result = contract.run("restart", { question: questions.confirm, backoffMs });
			const first = await contract.server.nextConnection();
			await first.attach();
			expect(first.features).toContain("restart-notice");
			await start(first, "s1");
			const asked = await first.expect("input-request");
			first.send({ type: "restarting", reconnectWithinMs });
			first.close(1012, "restarting");
			const expected = { type: "resume", sessions: [{ session: "s1", requests: [asked.request] }] };
			for (let i = 0; i < refusals; i++) await answerResume(contract.server, expected, false);
			await answerResume(contract.server, expected, true);
			const outcome = (await result) as Outcome;
			expect(outcome.results).toEqual([
				{ type: "input-result", request: asked.request, status: "answered", value: true },
			]);
			expect(outcome.log).toContainEqual({ event: "restarting", reconnectWithinMs });
			expect(outcome.log.find((entry) => entry.event === "closed")).toMatchObject({
				closed: { code: 1012, reason: "restarting", reconnectWithinMs },
			});
			return outcome.log;
		}

		test(
			"reconnects at once after 1012 and retries the same resume every 250 ms inside the window",
			async () => {
				const log = await restartWith(1000, 2, 5_000);
				expect(log.filter((entry) => entry.event === "attempt")).toEqual([
					{ event: "attempt", attempt: 1, at: 0 },
					{ event: "attempt", attempt: 2, at: 250 },
					{ event: "attempt", attempt: 3, at: 500 },
				]);
				expect(log.filter((entry) => entry.event === "waiting")).toEqual([
					{ event: "waiting", ms: 250, rule: "restart" },
					{ event: "waiting", ms: 250, rule: "restart" },
				]);
				expect(log.filter((entry) => entry.event === "failed").map((entry) => entry.error)).toEqual([
					expect.objectContaining({ name: "Refused", code: "unavailable", retry: true }),
					expect.objectContaining({ name: "Refused", code: "unavailable", retry: true }),
				]);
				// Nothing ended on the way: the session is destroyed only by the final detach.
				const resumed = log.findLastIndex((entry) => entry.event === "attempt");
				expect(log.slice(0, resumed).some((entry) => entry.event === "destroy")).toBe(false);
				expect(log.filter((entry) => entry.event === "destroy")).toEqual([
					{ event: "destroy", session: "s1" },
				]);
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"once reconnectWithinMs has passed since the close, it waits on the caller's own backoff",
			async () => {
				const log = await restartWith(500, 3, 5_000);
				expect(log.filter((entry) => entry.event === "attempt").map((entry) => entry.at)).toEqual([
					0, 250, 500, 5_500,
				]);
				expect(log.filter((entry) => entry.event === "waiting")).toEqual([
					{ event: "waiting", ms: 250, rule: "restart" },
					{ event: "waiting", ms: 250, rule: "restart" },
					{ event: "waiting", ms: 5_000, rule: "backoff" },
				]);
			},
			CONTRACT_TIMEOUT_MS,
		);
	});
}
