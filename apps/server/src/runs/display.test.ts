import { describe, expect, test } from "bun:test";
import type { Stage } from "@chopin/agent-link";
import { displayRunStatus, displayStageStatuses, isLive } from "./display";
import { applyCard, mergeStages } from "./merge";

const stage = (id: string, status: Stage["status"], parentIds?: string[]): Stage => ({
	id,
	name: id,
	status,
	...(parentIds && { parentIds }),
});

describe("run status as shown", () => {
	test("finished only with ended; live means running, waiting or paused", () => {
		expect(displayRunStatus({ status: "finished" })).toBe("running");
		expect(displayRunStatus({ status: "finished", ended: 10 })).toBe("finished");
		expect(displayRunStatus({ status: "failed" })).toBe("failed");
		expect(["running", "waiting", "paused"].map((s) => isLive(s as never))).toEqual([true, true, true]);
		expect(["finished", "failed", "stopped", "blocked"].map((s) => isLive(s as never))).toEqual([
			false,
			false,
			false,
			false,
		]);
	});
});

describe("stage statuses as shown", () => {
	test("unfinished descendants of stopped, failed, blocked or skipped stages show stopped, through any depth", () => {
		for (const stopper of ["stopped", "failed", "blocked", "skipped"] as const) {
			const stages = [
				stage("root", stopper),
				stage("child", "running", ["root"]),
				stage("grandchild", "pending", ["child"]),
				stage("done-child", "completed", ["root"]),
				stage("failed-child", "failed", ["root"]),
				stage("waiting-child", "awaiting_input", ["root"]),
				stage("paused-child", "paused", ["root"]),
				stage("other", "running"),
			];
			expect(displayStageStatuses(stages, "running")).toEqual([
				stopper,
				"stopped",
				"stopped",
				"completed",
				"failed",
				"stopped",
				"stopped",
				"running",
			]);
		}
	});

	test("a completed or running parent stops nothing; an unknown parent is no parent yet", () => {
		const stages = [
			stage("a", "completed"),
			stage("b", "running", ["a"]),
			stage("c", "pending", ["missing"]),
			stage("d", "pending", ["b", "x"]),
		];
		expect(displayStageStatuses(stages, "running")).toEqual(["completed", "running", "pending", "pending"]);
	});

	test("a stage with several parents is stopped when any of them stops it", () => {
		const stages = [stage("a", "running"), stage("b", "failed"), stage("c", "pending", ["a", "b"])];
		expect(displayStageStatuses(stages, "running")).toEqual(["running", "failed", "stopped"]);
	});

	test("parents may come later in the list, and a cycle of links ends", () => {
		const stages = [
			stage("c", "running", ["b"]),
			stage("b", "running", ["a", "c"]),
			stage("a", "skipped", ["c"]),
		];
		expect(displayStageStatuses(stages, "running")).toEqual(["stopped", "stopped", "skipped"]);
		const loop = [stage("x", "running", ["y"]), stage("y", "running", ["x"])];
		expect(displayStageStatuses(loop, "running")).toEqual(["running", "running"]);
	});

	test("a stopped, failed or blocked run stops every unfinished stage, without links", () => {
		const stages = [
			stage("a", "running"),
			stage("b", "pending"),
			stage("c", "completed"),
			stage("d", "skipped"),
		];
		for (const run of ["stopped", "failed", "blocked"] as const) {
			expect(displayStageStatuses(stages, run)).toEqual(["stopped", "stopped", "completed", "skipped"]);
		}
		expect(displayStageStatuses(stages, "paused")).toEqual(["running", "pending", "completed", "skipped"]);
	});
});

describe("merging stages", () => {
	test("a known id is replaced whole where it stands, new ids follow in order sent, a repeat keeps its last value", () => {
		const stored = [stage("a", "running"), { ...stage("b", "running"), started: 5 }, stage("c", "pending")];
		const merged = mergeStages(stored, [
			stage("d", "pending"),
			stage("b", "completed"),
			stage("e", "pending"),
			stage("d", "running"),
		]);
		expect(merged).toEqual([
			stage("a", "running"),
			stage("b", "completed"),
			stage("c", "pending"),
			stage("d", "running"),
			stage("e", "pending"),
		]);
		expect(merged[1]).not.toHaveProperty("started");
	});

	test("cards: full replaces unless empty, delta merges, earlierStages from the last full card", () => {
		const card = { id: "r", name: "Run", status: "running" as const, started: 1, updated: 2, waiting: 0 };
		const full = applyCard(undefined, { ...card, stages: [stage("a", "running")], earlierStages: 7 });
		expect(full.card.earlierStages).toBe(7);
		const delta = applyCard(full, {
			...card,
			stagesDelta: true,
			stages: [stage("b", "pending")],
			updated: 3,
		});
		expect([delta.stages.map((s) => s.id), delta.card.earlierStages, delta.card.updated]).toEqual([
			["a", "b"],
			7,
			3,
		]);
		const empty = applyCard(delta, { ...card, status: "finished", ended: 9, stages: [], earlierStages: 99 });
		expect([
			empty.stages.map((s) => s.id),
			empty.card.earlierStages,
			empty.card.status,
			empty.card.ended,
		]).toEqual([["a", "b"], 7, "finished", 9]);
		const replaced = applyCard(empty, { ...card, stages: [stage("z", "running")] });
		expect([replaced.stages.map((s) => s.id), replaced.card.earlierStages]).toEqual([["z"], 0]);
		expect(replaced.card).not.toHaveProperty("ended");
		const firstEmpty = applyCard(undefined, { ...card, stages: [], earlierStages: 4 });
		expect([firstEmpty.stages, firstEmpty.card.earlierStages]).toEqual([[], 4]);
		const firstDelta = applyCard(undefined, { ...card, stagesDelta: true, stages: [] });
		expect([firstDelta.stages, firstDelta.card.earlierStages]).toEqual([[], 0]);
	});
});
