import { describe, expect, test } from "bun:test";
import {
	FEATURES,
	FEATURES_HEADER,
	formatFeaturesHeader,
	grantedFeatures,
	parseFeaturesHeader,
} from "./features";

describe("features", () => {
	test("the nine features of chopin.agent.v1", () => {
		expect([...FEATURES].sort() as string[]).toEqual(
			[
				"attachments",
				"capability-catalog",
				"decision-option-previews",
				"restart-notice",
				"resumable-sessions",
				"retry-turn",
				"run-stage-deltas",
				"session-forks",
				"steer-turn",
			].sort(),
		);
		expect(FEATURES_HEADER).toBe("Chopin-Agent-Features");
	});

	test("the header parser trims, ignores unknown names and empty entries, keeps each name once", () => {
		expect(parseFeaturesHeader("run-stage-deltas, decision-option-previews")).toEqual([
			"run-stage-deltas",
			"decision-option-previews",
		]);
		expect(parseFeaturesHeader(" attachments ,,teleport,  , attachments,steer-turn")).toEqual([
			"attachments",
			"steer-turn",
		]);
		expect(parseFeaturesHeader("Run-Stage-Deltas")).toEqual([]);
		expect(parseFeaturesHeader("")).toEqual([]);
		expect(parseFeaturesHeader(null)).toEqual([]);
		expect(parseFeaturesHeader(undefined)).toEqual([]);
	});

	test("the formatter writes each name once, and the parser reads it back", () => {
		const header = formatFeaturesHeader(["resumable-sessions", "restart-notice", "resumable-sessions"]);
		expect(header).toBe("resumable-sessions, restart-notice");
		expect(parseFeaturesHeader(header)).toEqual(["resumable-sessions", "restart-notice"]);
		expect(parseFeaturesHeader(formatFeaturesHeader(FEATURES))).toEqual([...FEATURES]);
	});

	test("a client uses only what it asked for and attached lists", () => {
		expect([...grantedFeatures(["attachments", "steer-turn"], ["steer-turn", "future-thing"])]).toEqual([
			"steer-turn",
		]);
		expect(grantedFeatures(["attachments"], undefined).size).toBe(0);
		expect(grantedFeatures([], ["attachments"]).size).toBe(0);
	});
});
