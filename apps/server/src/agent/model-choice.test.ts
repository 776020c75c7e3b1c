// What a turn carries of a person's choice against the catalog, and the chat.model state the composer reads:
// pure rules (spec: Capability catalog), with the operator's MODEL in the default's place.
import { describe, expect, test } from "bun:test";
import type { Catalog } from "@chopin/agent-link";
import { createLogger } from "../log";
import { ReportedCatalog } from "./catalog";
import { composerState } from "./composer-model";
import { type ModelChoice, turnModel } from "./model-choice";

const log = createLogger({ level: "error", write: () => {} });
const read = (catalog: Catalog) => ReportedCatalog.read(catalog, log, "link-1");

const CATALOG = read({
	models: {
		available: [
			{ id: "a", name: "A", thinkingLevels: ["low", "high"] },
			{ id: "b", name: "B", thinkingLevels: ["max"] },
			{ id: "a", name: "A again", thinkingLevels: ["other"] },
		],
		default: { id: "a", thinkingLevel: "low" },
	},
});
const choice = (over: Partial<ModelChoice> = {}): ModelChoice => ({ fallbackNoted: false, ...over });

describe("turnModel", () => {
	test("nothing chosen: the operator's MODEL or nothing; never a level", () => {
		expect(turnModel(choice(), CATALOG, undefined)).toEqual({});
		expect(turnModel(choice(), CATALOG, "op")).toEqual({ model: "op" });
		// An operator's empty MODEL reads as none.
		expect(turnModel(choice(), CATALOG, "")).toEqual({});
	});

	test("a listed model replaces MODEL; a repeated id is its first entry's, levels included", () => {
		expect(turnModel(choice({ model: "b", thinkingLevel: "max" }), CATALOG, "op")).toEqual({
			model: "b",
			thinkingLevel: "max",
		});
		expect(turnModel(choice({ model: "a", thinkingLevel: "high" }), CATALOG, undefined)).toEqual({
			model: "a",
			thinkingLevel: "high",
		});
		expect(turnModel(choice({ model: "a", thinkingLevel: "other" }), CATALOG, undefined).fallback?.lost).toBe(
			"level",
		);
	});

	test("a level alone is checked against the default model: the operator's MODEL when set", () => {
		expect(turnModel(choice({ thinkingLevel: "high" }), CATALOG, undefined)).toEqual({
			thinkingLevel: "high",
		});
		expect(turnModel(choice({ thinkingLevel: "max" }), CATALOG, "b")).toEqual({
			model: "b",
			thinkingLevel: "max",
		});
		const lost = turnModel(choice({ thinkingLevel: "high" }), CATALOG, "b");
		expect(lost).toMatchObject({ model: "b", fallback: { lost: "level" } });
		expect(lost.fallback?.notice).toContain("for the default model");
	});

	test("without a catalog the choice is not applied and nothing is said", () => {
		expect(turnModel(choice({ model: "b", thinkingLevel: "max" }), undefined, undefined)).toEqual({});
		expect(turnModel(choice({ model: "b" }), undefined, "op")).toEqual({ model: "op" });
	});

	test("a model no longer listed sends neither; the notice names it by its saved name, else the id", () => {
		const gone = read({ models: { available: [{ id: "a", name: "A" }] } });
		const saved = turnModel(choice({ model: "b", modelName: "Bee", thinkingLevel: "max" }), gone, "op");
		expect(saved).toEqual({
			model: "op",
			fallback: {
				lost: "model",
				notice:
					"The model Bee chosen for this document is no longer offered by the Planner's client, so chopin answered with the client's default model.",
			},
		});
		expect(turnModel(choice({ model: "b" }), gone, undefined).fallback?.notice).toContain(
			"The model b chosen",
		);
	});
});

describe("composerState", () => {
	test("the catalog as the composer shows it, the default with its name and level, and an unavailable choice", () => {
		const state = composerState(choice({ model: "zz", modelName: "Zed" }), CATALOG, undefined);
		expect(state.catalog?.default).toEqual({ id: "a", name: "A", thinkingLevel: "low" });
		expect(state.catalog?.models.map((m) => m.name)).toEqual(["A", "B", "A again"]);
		expect(state.choice).toEqual({ model: "zz", modelName: "Zed", unavailable: "model" });
		// Once Chat recorded the fallback, the composer stops saying so.
		expect(composerState(choice({ model: "zz", fallbackNoted: true }), CATALOG, undefined).choice).toEqual({
			model: "zz",
			modelName: "zz",
		});
	});

	test("the operator's MODEL takes the default's place, without the catalog default's level", () => {
		expect(composerState(choice(), CATALOG, "b").catalog?.default).toEqual({ id: "b", name: "B" });
		expect(composerState(choice(), CATALOG, "unlisted").catalog?.default).toEqual({ id: "unlisted" });
	});

	test("an older choice without a saved name uses the current catalog's name; no catalog, no offer", () => {
		expect(composerState(choice({ model: "b" }), CATALOG, undefined).choice).toEqual({
			model: "b",
			modelName: "B",
		});
		expect(composerState(choice({ model: "b" }), undefined, undefined)).toEqual({
			choice: { model: "b", modelName: "b" },
		});
	});
});

describe("ReportedCatalog", () => {
	test("a model without an id and an empty level are skipped and logged; the rest is kept", () => {
		const lines: string[] = [];
		const catalog = ReportedCatalog.read(
			{
				models: {
					available: [
						{ id: "", name: "X" },
						{ id: "m", name: "M", thinkingLevels: ["", "hi"] },
					],
				},
			},
			createLogger({ write: (line) => lines.push(line) }),
			"link-9",
		);
		expect(catalog.models).toEqual([{ id: "m", name: "M", thinkingLevels: ["hi"] }]);
		expect(lines.map((l) => JSON.parse(l))).toMatchObject([
			{ level: "warn", msg: "catalog entry skipped", link: "link-9", path: "models.available[0]" },
			{ msg: "catalog entry skipped", path: "models.available[1].thinkingLevels[0]" },
		]);
	});

	test("a command is found only by its exact name and kind", () => {
		const catalog = read({ commands: [{ name: "Go", kind: "skill" }, { name: "go" }] });
		expect(catalog.command("Go", "skill")).toBeDefined();
		expect(catalog.command("go", "")).toBeDefined();
		expect(catalog.command("go", "skill")).toBeUndefined();
	});
});
