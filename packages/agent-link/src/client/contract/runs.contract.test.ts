/**
 * Contract: runs reports, in Bun and in Node.js. With run-stage-deltas a report over 2 MiB goes
 * as several complete reports in a row, full cards first and delta cards after, stages split
 * between them in order; without it, full cards carry the 64 most recent stages and
 * earlierStages counts the rest, and a report that still does not fit is not sent.
 */
import { describe, expect, test } from "bun:test";
import { FEATURES } from "../../features";
import { MAX_FRAME_BYTES } from "../../limits";
import type { Runs } from "../../schemas/client-messages";
import { CONTRACT_TIMEOUT_MS, RUNTIMES, useContract } from "./harness";
import { attachAndStart, revoke, sendTurn, untilTurnEnd } from "./script";

type Log = { log: Record<string, unknown>[] };
const stageIds = (card: number, from: number, to: number) =>
	Array.from({ length: to - from }, (_, i) => `run-${card}-stage-${from + i}`);

for (const runtime of RUNTIMES) {
	describe(`runs (${runtime})`, () => {
		const contract = useContract(runtime);

		test(
			"with run-stage-deltas a report over 2 MiB is split into complete reports: full cards, then delta cards",
			async () => {
				const result = contract.run("serve", {});
				const connection = await attachAndStart(contract.server);
				sendTurn(connection, [{ generateRuns: { cards: 64, stages: 150, nameLength: 400 } }]);
				const messages = await untilTurnEnd(connection);
				const parts = messages.filter((message): message is Runs => message.type === "runs");
				expect(parts.length).toBe(3);
				const sizes = connection.frames.flatMap((frame) =>
					"message" in frame && frame.message.type === "runs" ? [frame.bytes] : [],
				);
				expect(sizes.length).toBe(3);
				for (const size of sizes) expect(size).toBeLessThanOrEqual(MAX_FRAME_BYTES);

				const ids = parts[0]!.cards.map((card) => card.id);
				for (const part of parts) {
					expect(part.active).toEqual(ids);
					expect(part.paused).toEqual([]);
					expect(part.cards.map((card) => card.id)).toEqual(ids);
				}
				for (const card of parts[0]!.cards) {
					expect(card.stagesDelta).toBeUndefined();
					expect(card.stages.length).toBeLessThanOrEqual(64);
					expect(card.stages.length).toBeGreaterThan(0);
				}
				for (const part of parts.slice(1)) {
					for (const card of part.cards) {
						expect(card.stagesDelta).toBe(true);
						expect("earlierStages" in card).toBe(false);
					}
				}
				// Every stage arrives once, in order, across the parts.
				ids.forEach((_, c) => {
					const received = parts.flatMap((part) => part.cards[c]!.stages.map((stage) => stage.id));
					expect(received).toEqual(stageIds(c, 0, 150));
				});
				expect(messages.at(-1)).toMatchObject({ type: "turn-end", status: "finished" });
				revoke(connection);
				const turn = ((await result) as Log).log.find((entry) => entry.event === "turn");
				expect(turn?.steps).toEqual([{ frames: 3 }]);
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"a report that fits one frame goes as it is, in one message",
			async () => {
				const result = contract.run("serve", {});
				const connection = await attachAndStart(contract.server);
				sendTurn(connection, [{ generateRuns: { cards: 2, stages: 3, nameLength: 10 } }]);
				const runs = await connection.expect("runs");
				expect(runs.cards.map((card) => card.stages.length)).toEqual([3, 3]);
				await connection.expect("turn-end");
				revoke(connection);
				await result;
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"without run-stage-deltas full cards carry the 64 most recent stages and earlierStages counts the rest",
			async () => {
				const result = contract.run("serve", {});
				const grant = FEATURES.filter((feature) => feature !== "run-stage-deltas");
				const connection = await attachAndStart(contract.server, { grant });
				sendTurn(connection, [{ generateRuns: { cards: 3, stages: 100, nameLength: 10 } }]);
				const runs = await connection.expect("runs");
				runs.cards.forEach((card, c) => {
					expect(card.stagesDelta).toBeUndefined();
					expect(card.stages.map((stage) => stage.id)).toEqual(stageIds(c, 36, 100));
					expect((card as { earlierStages?: number }).earlierStages).toBe(36);
				});
				expect(await connection.expect("turn-end")).toMatchObject({ status: "finished" });
				revoke(connection);
				expect(((await result) as Log).log.find((entry) => entry.event === "turn")?.steps).toEqual([
					{ frames: 1 },
				]);
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"without run-stage-deltas a report over 2 MiB is not sent and reportRuns throws",
			async () => {
				const result = contract.run("serve", {});
				const grant = FEATURES.filter((feature) => feature !== "run-stage-deltas");
				const connection = await attachAndStart(contract.server, { grant });
				sendTurn(connection, [{ generateRuns: { cards: 64, stages: 64, nameLength: 600 } }]);
				expect(await connection.expect("turn-end")).toMatchObject({ status: "failed" });
				revoke(connection);
				const turn = ((await result) as Log).log.find((entry) => entry.event === "turn");
				expect(turn?.error).toMatchObject({ name: "EncodeError", code: "message-too-large" });
			},
			CONTRACT_TIMEOUT_MS,
		);
	});
}
