/** RunsSent with planRunsReport: after each attach every stage once, then only what changes, when that is certain. */
import { describe, expect, test } from "bun:test";
import type { Runs } from "../schemas/client-messages";
import type { Stage } from "../schemas/runs";
import { planRunsReport, type ReportedCard, type ReportedFullCard } from "./runs-report";
import { RunsSent } from "./runs-sent";

const stage = (i: number, fields: Partial<Stage> = {}): Stage => ({
	id: `s${i}`,
	name: `Stage ${i}`,
	status: "completed",
	...fields,
});
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => stage(from + i));

const card = (id: string, stages: Stage[], fields: Partial<ReportedFullCard> = {}): ReportedFullCard => ({
	id,
	name: `Run ${id}`,
	status: "running",
	started: 100,
	updated: 200,
	waiting: 0,
	stages,
	...fields,
});

/** One link's reports: each planned with what the earlier ones sent, then recorded as sent. */
function link() {
	const sent = new RunsSent();
	return (...cards: ReportedCard[]): Runs[] => {
		const messages = planRunsReport("s1", { active: [], paused: [], cards }, true, sent);
		sent.record(messages);
		return messages;
	};
}

const shape = (messages: Runs[]) =>
	messages.map((m) => m.cards.map((c) => [c.id, c.stagesDelta ?? "full", c.stages.map((s) => s.id)]));

describe("after a run's stages went once", () => {
	test("the same report again is a delta of nothing; a changed and an added stage go alone, with the card's fields", () => {
		const report = link();
		expect(shape(report(card("a", range(0, 3), { earlierStages: 2 })))).toEqual([
			[["a", "full", ["s0", "s1", "s2"]]],
		]);
		expect(shape(report(card("a", range(0, 3), { earlierStages: 2 })))).toEqual([[["a", true, []]]]);
		const [next] = report(
			card("a", [stage(0), stage(1, { status: "failed" }), stage(2), stage(3)], {
				status: "waiting",
				waiting: 1,
				earlierStages: 2,
			}),
		);
		expect(next!.cards[0]).toEqual({
			id: "a",
			name: "Run a",
			status: "waiting",
			started: 100,
			updated: 200,
			waiting: 1,
			stagesDelta: true,
			stages: [stage(1, { status: "failed" }), stage(3)],
		});
	});

	test("a run of 100 stages goes as a full card and a delta once, then one delta of the one stage added", () => {
		const report = link();
		expect(shape(report(card("a", range(0, 100))))).toEqual([
			[["a", "full", range(0, 64).map((s) => s.id)]],
			[["a", true, range(64, 100).map((s) => s.id)]],
		]);
		expect(shape(report(card("a", range(0, 101))))).toEqual([[["a", true, ["s100"]]]]);
	});

	test("a card that is not the stored stages with more after them goes full: reordered, shorter, repeated id, new earlierStages", () => {
		for (const next of [
			card("a", [stage(1), stage(0), stage(2)]),
			card("a", [stage(0), stage(1)]),
			card("a", [stage(0), stage(1), stage(2), stage(1)]),
			card("a", range(0, 3), { earlierStages: 5 }),
			card("a", [stage(5)]),
		]) {
			const report = link();
			report(card("a", range(0, 3)));
			expect(report(next)[0]!.cards[0]).toEqual(next);
		}
	});

	test("a run whose card had ended, or that a report left out, goes full: Chopin may have removed its card", () => {
		const report = link();
		const ended = card("a", range(0, 2), { status: "finished", ended: 300 });
		report(ended, card("b", range(0, 2)));
		expect(report(ended)[0]!.cards[0]).toEqual(ended);
		expect(shape(report(ended, card("b", range(0, 3))))).toEqual([
			[
				["a", "full", ["s0", "s1"]],
				["b", "full", ["s0", "s1", "s2"]],
			],
		]);
		// A finished card without ended is live as Chat shows it.
		const report2 = link();
		report2(card("c", range(0, 2), { status: "finished" }));
		expect(shape(report2(card("c", range(0, 2), { status: "finished" })))).toEqual([[["c", true, []]]]);
	});

	test("a run first sent as a delta, or as a full card with none, stays unknown: the next full card goes full", () => {
		const report = link();
		report({ ...card("a", [stage(0)]), stagesDelta: true }, card("b", []));
		expect(shape(report(card("a", range(0, 2)), card("b", range(0, 1))))).toEqual([
			[
				["a", "full", ["s0", "s1"]],
				["b", "full", ["s0"]],
			],
		]);
		// Known from then on; a delta from the backend adds to it, and a full card with none keeps it.
		report({ ...card("a", [stage(2)]), stagesDelta: true }, card("b", []));
		expect(shape(report(card("a", range(0, 4)), card("b", range(0, 2))))).toEqual([
			[
				["a", true, ["s3"]],
				["b", true, ["s1"]],
			],
		]);
	});

	test("without run-stage-deltas nothing is narrowed: full cards every time", () => {
		const sent = new RunsSent();
		const input = { active: [], paused: [], cards: [card("a", range(0, 3))] };
		sent.record(planRunsReport("s1", input, false, sent));
		expect(planRunsReport("s1", input, false, sent)[0]!.cards[0]).toEqual(card("a", range(0, 3)));
	});
});
