import { describe, expect, test } from "bun:test";
import { parseClientFrame } from "../parse";
import { deltaCard, fullCard, stage } from "../testing/examples";
import { ALL_FEATURES, repeat, withField } from "../testing/helpers";
import { RUN_STATUSES, runCardSchema, STAGE_STATUSES } from "./runs";

function parseCards(cards: unknown[]) {
	return parseClientFrame(JSON.stringify({ type: "runs", session: "s1", active: [], paused: [], cards }), {
		features: ALL_FEATURES,
	});
}

function expectRefused(card: unknown, fragment: string) {
	const result = parseCards([card]);
	expect(result.ok).toBe(false);
	if (!result.ok) expect(result.error.message).toContain(fragment);
}

const stages = (n: number) => Array.from({ length: n }, (_, i) => ({ ...stage, id: `stage-${i}` }));

describe("run cards", () => {
	test("the full and delta examples parse and are told apart by stagesDelta", () => {
		expect(runCardSchema.parse(fullCard).stagesDelta).toBeUndefined();
		expect(runCardSchema.parse(deltaCard).stagesDelta).toBe(true);
		expect(parseCards([fullCard, deltaCard]).ok).toBe(true);
	});

	test("a full card holds at most 64 stages; a delta card has no count limit", () => {
		expect(parseCards([{ ...fullCard, stages: stages(64) }]).ok).toBe(true);
		expectRefused({ ...fullCard, stages: stages(65) }, "cards[0].stages has more than 64 entries");
		expect(parseCards([{ ...deltaCard, stages: stages(500) }]).ok).toBe(true);
	});

	test("a delta card has no earlierStages; stagesDelta is only ever true", () => {
		expectRefused({ ...deltaCard, earlierStages: 2 }, 'cards[0] has an unknown field "earlierStages"');
		expectRefused({ ...deltaCard, stagesDelta: false }, "cards[0].stagesDelta must be absent or true");
	});

	test("parentIds holds at most 64 ids of 1 to 128 characters", () => {
		const ids = (n: number) => Array.from({ length: n }, (_, i) => `p-${i}`);
		expect(parseCards([withField(fullCard, ["stages", 0, "parentIds"], ids(64))]).ok).toBe(true);
		expectRefused(
			withField(fullCard, ["stages", 0, "parentIds"], ids(65)),
			"cards[0].stages[0].parentIds has more than 64",
		);
		expectRefused(
			withField(fullCard, ["stages", 0, "parentIds"], [repeat(129)]),
			"parentIds[0] is longer than 128",
		);
		expectRefused(withField(fullCard, ["stages", 0, "parentIds"], [""]), "parentIds[0] must not be empty");
	});

	test("statuses are the spec's", () => {
		for (const status of RUN_STATUSES) expect(parseCards([{ ...fullCard, status }]).ok).toBe(true);
		for (const status of STAGE_STATUSES)
			expect(parseCards([withField(fullCard, ["stages", 0, "status"], status)]).ok).toBe(true);
		expectRefused({ ...fullCard, status: "done" }, "cards[0].status must be one of");
		expectRefused(
			withField(fullCard, ["stages", 0, "status"], "done"),
			"cards[0].stages[0].status must be one of",
		);
	});

	test("names are notes; times, waiting and earlierStages are whole non-negative numbers", () => {
		expect(parseCards([{ ...fullCard, name: repeat(4000) }]).ok).toBe(true);
		expectRefused({ ...fullCard, name: repeat(4001) }, "cards[0].name is longer than 4000");
		expectRefused(withField(fullCard, ["stages", 0, "name"], repeat(4001)), "cards[0].stages[0].name");
		expectRefused({ ...fullCard, started: 1.5 }, "cards[0].started must be an integer");
		expectRefused({ ...fullCard, waiting: -1 }, "cards[0].waiting must not be negative");
		expectRefused({ ...fullCard, earlierStages: -1 }, "cards[0].earlierStages must not be negative");
		expectRefused({ ...fullCard, updated: undefined }, "cards[0].updated is required");
	});

	test("stage ids are 1 to 128 characters; optional fields may be left out", () => {
		expectRefused(withField(fullCard, ["stages", 0, "id"], repeat(129)), "cards[0].stages[0].id");
		expect(parseCards([{ ...fullCard, stages: [{ id: "a", name: "A", status: "pending" }] }]).ok).toBe(true);
		expect(parseCards([{ ...fullCard, stages: [] }]).ok).toBe(true);
	});
});
