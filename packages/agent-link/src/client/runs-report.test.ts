/** planRunsReport: one message when it fits, the delta split when it does not, the 64-stage fallback. */
import { describe, expect, test } from "bun:test";
import { EncodeError, encodeClientMessage } from "../encode";
import { MAX_FRAME_BYTES } from "../limits";
import type { Stage } from "../schemas/runs";
import { utf8ByteLength } from "../text";
import { LinkError } from "./errors";
import { planRunsReport, type ReportedCard, type ReportedFullCard, type RunsReport } from "./runs-report";

const stage = (run: string, i: number, name = `Stage ${i}`): Stage => ({
	id: `${run}-s${i}`,
	name,
	status: "completed",
});

function card(id: string, stages: number, name?: (i: number) => string): ReportedFullCard {
	return {
		id,
		name: `Run ${id}`,
		status: "running",
		started: 100,
		updated: 200,
		waiting: 0,
		stages: Array.from({ length: stages }, (_, i) => stage(id, i, name?.(i))),
	};
}

const report = (...cards: ReportedCard[]): RunsReport => ({
	active: cards.map((c) => c.id),
	paused: [],
	cards,
});
const ids = (stages: Stage[]) => stages.map((s) => s.id);
const deltas = ["run-stage-deltas"] as const;

describe("with run-stage-deltas", () => {
	test("a report that fits one frame is one message, as reported", () => {
		const input = report(card("a", 3), card("b", 0));
		expect(planRunsReport("s1", input, true)).toEqual([{ type: "runs", session: "s1", ...input }]);
	});

	test("a card over 64 stages is split even when the whole fits: 64 in the full card, the rest in a delta", () => {
		const parts = planRunsReport("s1", report(card("a", 100), card("b", 2)), true);
		expect(parts.length).toBe(2);
		const [first, second] = parts as [(typeof parts)[0], (typeof parts)[0]];
		expect(first.cards.map((c) => [c.stagesDelta, c.stages.length])).toEqual([
			[undefined, 64],
			[undefined, 2],
		]);
		expect(second.cards.map((c) => [c.stagesDelta, c.stages.length])).toEqual([
			[true, 36],
			[true, 0],
		]);
		expect([...ids(first.cards[0]!.stages), ...ids(second.cards[0]!.stages)]).toEqual(
			ids(card("a", 100).stages),
		);
		for (const part of parts) encodeClientMessage(part, { features: deltas });
	});

	test("a report over 2 MiB becomes frames that each fit, with every stage once and in order", () => {
		const long = (i: number) => `Stage ${i} ${"é".repeat(1000)}`;
		const cards = Array.from({ length: 10 }, (_, c) => card(`r${c}`, 120, long));
		const parts = planRunsReport("s1", report(...cards), true);
		expect(parts.length).toBeGreaterThan(1);
		for (const [i, part] of parts.entries()) {
			const text = encodeClientMessage(part, { features: deltas });
			expect(utf8ByteLength(text)).toBeLessThanOrEqual(MAX_FRAME_BYTES);
			expect(part.cards.map((c) => c.id)).toEqual(cards.map((c) => c.id));
			for (const c of part.cards) expect(c.stagesDelta === true).toBe(i > 0);
		}
		cards.forEach((c, n) => {
			expect(parts.flatMap((part) => ids(part.cards[n]!.stages))).toEqual(ids(c.stages));
		});
	});

	test("every full card with stages gets its first stage in the first part, so it replaces the stored ones", () => {
		const big = (i: number) => `${i} ${"€".repeat(3990)}`;
		// About 12 KB a stage: the first two cards' 64 stages alone would fill the first frame.
		const parts = planRunsReport(
			"s1",
			report(card("a", 80, big), card("b", 80, big), card("c", 80, big), card("d", 0)),
			true,
		);
		const first = parts[0]!;
		expect(first.cards.map((c) => c.stages.length > 0)).toEqual([true, true, true, false]);
		expect(first.cards[2]!.stages.length).toBeLessThan(64);
		expect(first.cards[3]).toMatchObject({ id: "d", stages: [] });
		expect(first.cards.every((c) => c.stagesDelta === undefined)).toBe(true);
		expect(parts.at(-1)!.cards.every((c) => c.stagesDelta === true)).toBe(true);
	});

	test("a reported delta card stays a delta card, and earlierStages stays on the full card only", () => {
		const delta = { ...card("d", 70), stagesDelta: true as const };
		const full = { ...card("f", 70), earlierStages: 5 };
		const parts = planRunsReport("s1", report(delta, full), true);
		expect(parts[0]!.cards[0]).toMatchObject({ stagesDelta: true });
		expect(parts[0]!.cards[0]!.stages.length).toBe(70);
		expect(parts[0]!.cards[1]).toMatchObject({ earlierStages: 5 });
		expect("earlierStages" in parts[1]!.cards[1]!).toBe(false);
	});
});

describe("without run-stage-deltas", () => {
	test("full cards carry the 64 most recent stages and earlierStages counts the rest, added to the reported count", () => {
		const [part] = planRunsReport(
			"s1",
			report(card("a", 100), { ...card("b", 70), earlierStages: 4 }, card("c", 5)),
			false,
		);
		const [a, b, c] = part!.cards as [
			ReportedCard & { earlierStages?: number },
			ReportedCard & { earlierStages?: number },
			ReportedCard & { earlierStages?: number },
		];
		expect(ids(a.stages)).toEqual(ids(card("a", 100).stages.slice(36)));
		expect(a.earlierStages).toBe(36);
		expect(b.earlierStages).toBe(10);
		expect(c.earlierStages).toBeUndefined();
		expect(c.stages.length).toBe(5);
	});

	test("a delta card cannot be sent", () => {
		expect(() => planRunsReport("s1", report({ ...card("d", 1), stagesDelta: true }), false)).toThrow(
			LinkError,
		);
	});
});

test("an invalid report is refused with one sentence naming the field", () => {
	const bad = report({ ...card("a", 1), status: "exploded" as never });
	expect(() => planRunsReport("s1", bad, true)).toThrow(EncodeError);
	expect(() => planRunsReport("s1", bad, true)).toThrow(
		"Invalid runs report: cards[0].status must be one of",
	);
});
