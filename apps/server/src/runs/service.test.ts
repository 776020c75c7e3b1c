import { expect, test } from "bun:test";
import type { RunCard, Stage } from "@chopin/agent-link";
import { DocumentService } from "../documents/service";
import { describeStores } from "../store/testing";
import { testDeps } from "../testing/domain";
import { RunService, RunsError } from "./service";

const stage = (id: string, status: Stage["status"], extra: Partial<Stage> = {}): Stage => ({
	id,
	name: `Stage ${id}`,
	status,
	...extra,
});

const card = (id: string, fields: Partial<RunCard> = {}): RunCard =>
	({
		id,
		name: `Run ${id}`,
		status: "running",
		started: 100,
		updated: 100,
		waiting: 0,
		stages: [],
		...fields,
	}) as RunCard;

const report = (...cards: RunCard[]) => ({ active: [], paused: [], cards });

describeStores("run cards", (t) => {
	const setup = async () => {
		const deps = testDeps(t.store);
		const docs = new DocumentService(deps);
		const runs = new RunService(deps);
		const doc = await docs.create({ repository: "a/b", title: "Plan", createdBy: "alice" });
		return { deps, docs, runs, doc };
	};

	test("a full card's stages replace the stored ones; earlierStages is kept with them", async () => {
		const { deps, runs, doc } = await setup();
		const first = await runs.apply(
			doc.id,
			"s1",
			report(card("r1", { stages: [stage("a", "completed"), stage("b", "running")], earlierStages: 10 })),
		);
		expect(first.cards[0]).toMatchObject({
			id: "r1",
			session: "s1",
			name: "Run r1",
			reportedStatus: "running",
			displayStatus: "running",
			live: true,
			earlierStages: 10,
		});
		await runs.apply(
			doc.id,
			"s1",
			report(card("r1", { stages: [stage("c", "running")], earlierStages: 12 })),
		);
		const [listed] = await runs.list(doc.id);
		expect([listed!.stages.map((s) => s.id), listed!.earlierStages]).toEqual([["c"], 12]);
		expect(deps.eventsOf("runs.updated")).toHaveLength(2);
	});

	test("a full card with no stages keeps the stored stages and their earlierStages, but takes its other fields", async () => {
		const { runs, doc } = await setup();
		await runs.apply(doc.id, "s1", report(card("r1", { stages: [stage("a", "running")], earlierStages: 3 })));
		const change = await runs.apply(
			doc.id,
			"s1",
			report(card("r1", { status: "finished", ended: 200, updated: 200, stages: [], earlierStages: 50 })),
		);
		expect(change.cards[0]).toMatchObject({
			reportedStatus: "finished",
			displayStatus: "finished",
			live: false,
			ended: 200,
			earlierStages: 3,
			stages: [{ id: "a", status: "running", displayStatus: "running" }],
		});
	});

	test("delta cards merge by id, keep earlierStages, and never remove a stage", async () => {
		const { runs, doc } = await setup();
		await runs.apply(
			doc.id,
			"s1",
			report(
				card("r1", {
					stages: [stage("a", "running", { started: 1 }), stage("b", "pending")],
					earlierStages: 2,
				}),
			),
		);
		await runs.apply(
			doc.id,
			"s1",
			report(
				card("r1", {
					stagesDelta: true,
					stages: [
						stage("c", "pending"),
						stage("a", "completed"),
						stage("d", "pending"),
						stage("c", "running"),
					],
				}),
			),
		);
		await runs.apply(doc.id, "s1", report(card("r1", { stagesDelta: true, stages: [] })));
		const [run] = await runs.list(doc.id);
		expect(run!.stages.map((s) => [s.id, s.status])).toEqual([
			["a", "completed"],
			["b", "pending"],
			["c", "running"],
			["d", "pending"],
		]);
		expect(run!.stages[0]).not.toHaveProperty("started");
		expect(run!.earlierStages).toBe(2);
	});

	test("a report of 64 cards, and a split report whose later parts are deltas", async () => {
		const { runs, doc } = await setup();
		const many = Array.from({ length: 64 }, (_, i) =>
			card(`r${i}`, { started: i, stages: [stage("s", "running")] }),
		);
		expect((await runs.apply(doc.id, "s1", report(...many))).cards).toHaveLength(64);
		expect((await runs.list(doc.id)).map((r) => r.id)).toEqual(many.map((c) => c.id));
		const tooMany = await runs.apply(doc.id, "s1", report(...many, card("r64"))).catch((e) => e);
		expect(tooMany).toBeInstanceOf(RunsError);
		expect(tooMany.code).toBe("invalid-runs");
		// 100 stages sent as a full card of 64 and a delta of the rest, in two runs messages.
		const stages = Array.from({ length: 100 }, (_, i) => stage(`st${i}`, "completed"));
		await runs.apply(doc.id, "s1", report(card("r0", { stages: stages.slice(0, 64) })));
		await runs.apply(doc.id, "s1", report(card("r0", { stagesDelta: true, stages: stages.slice(64) })));
		const r0 = (await runs.list(doc.id)).find((r) => r.id === "r0")!;
		expect(r0.stages.map((s) => s.id)).toEqual(stages.map((s) => s.id));
	});

	test("where the spec is silent: a repeated id in a full card, [] for a run without stages, a delta first", async () => {
		const { runs, doc } = await setup();
		await runs.apply(
			doc.id,
			"s1",
			report(
				card("full", { stages: [stage("a", "pending"), stage("b", "running"), stage("a", "completed")] }),
				card("empty", { earlierStages: 7 }),
				card("delta", { stagesDelta: true, stages: [stage("x", "running")] }),
			),
		);
		const shown = Object.fromEntries(
			(await runs.list(doc.id)).map((r) => [r.id, [r.stages.map((s) => [s.id, s.status]), r.earlierStages]]),
		);
		expect(shown).toEqual({
			full: [
				[
					["a", "completed"],
					["b", "running"],
				],
				0,
			],
			empty: [[], 7],
			delta: [[["x", "running"]], 0],
		});
	});

	test("parentIds: unfinished descendants of a failed stage show stopped, finished outcomes stay", async () => {
		const { runs, doc } = await setup();
		const change = await runs.apply(
			doc.id,
			"s1",
			report(
				card("r1", {
					stages: [
						stage("child", "running", { parentIds: ["parent"] }),
						stage("parent", "failed"),
						stage("sibling", "completed", { parentIds: ["parent"] }),
						stage("orphan", "running", { parentIds: ["not-yet-reported"] }),
					],
				}),
			),
		);
		expect(change.cards[0]!.stages.map((s) => [s.id, s.status, s.displayStatus])).toEqual([
			["child", "running", "stopped"],
			["parent", "failed", "failed"],
			["sibling", "completed", "completed"],
			["orphan", "running", "running"],
		]);
		// The parent arrives later, in a delta: the rule applies over all of the run's stages.
		const later = await runs.apply(
			doc.id,
			"s1",
			report(card("r1", { stagesDelta: true, stages: [stage("not-yet-reported", "skipped")] })),
		);
		expect(later.cards[0]!.stages.find((s) => s.id === "orphan")!.displayStatus).toBe("stopped");
	});

	test("a finished card is finished only with ended; a stopped, failed or blocked run stops its unfinished stages", async () => {
		const { runs, doc } = await setup();
		const change = await runs.apply(
			doc.id,
			"s1",
			report(
				card("no-end", { status: "finished", stages: [stage("a", "running")] }),
				card("blocked", {
					status: "blocked",
					started: 101,
					stages: [stage("a", "running"), stage("b", "completed")],
				}),
			),
		);
		const [noEnd, blocked] = change.cards;
		expect([noEnd!.displayStatus, noEnd!.live, noEnd!.stages[0]!.displayStatus]).toEqual([
			"running",
			true,
			"running",
		]);
		expect([blocked!.displayStatus, blocked!.live]).toEqual(["blocked", false]);
		expect(blocked!.stages.map((s) => s.displayStatus)).toEqual(["stopped", "completed"]);
	});

	test("stopLiveRuns: a closed link's live runs show stopped; ended ones and other sessions stay", async () => {
		const { deps, runs, doc } = await setup();
		await runs.apply(doc.id, "s2", report(card("elsewhere", { started: 104 })));
		await runs.apply(doc.id, "s1", {
			active: ["live"],
			paused: ["paused"],
			cards: [
				card("live", { stages: [stage("a", "running"), stage("b", "completed")] }),
				card("paused", { status: "paused", started: 101 }),
				card("unended", { status: "finished", started: 102 }),
				card("done", { status: "finished", ended: 300, started: 103 }),
			],
		});
		expect(runs.roots(doc.id, "s1")).toEqual({ active: ["live"], paused: ["paused"] });
		const before = deps.eventsOf("runs.updated").length;
		const stopped = await runs.stopLiveRuns(doc.id, "s1");
		expect(stopped.cards.map((c) => [c.id, c.reportedStatus, c.displayStatus])).toEqual([
			["live", "stopped", "stopped"],
			["paused", "stopped", "stopped"],
			["unended", "stopped", "stopped"],
		]);
		expect(stopped.cards[0]!.stages.map((s) => s.displayStatus)).toEqual(["stopped", "completed"]);
		expect(runs.roots(doc.id, "s1")).toEqual({ active: [], paused: [] });
		const listed = await runs.list(doc.id);
		expect(listed.map((c) => [c.id, c.displayStatus])).toEqual([
			["live", "stopped"],
			["paused", "stopped"],
			["unended", "stopped"],
			["done", "finished"],
			["elsewhere", "running"],
		]);
		expect(deps.eventsOf("runs.updated")).toHaveLength(before + 1);
		// Nothing live left in s1: stopping again changes and publishes nothing.
		expect((await runs.stopLiveRuns(doc.id, "s1")).cards).toEqual([]);
		expect(deps.eventsOf("runs.updated")).toHaveLength(before + 1);
		await runs.stopLiveRuns(doc.id);
		expect((await runs.list(doc.id)).every((c) => !c.live)).toBe(true);
	});

	test("a later run replaces ended cards, and keeps live ones and the ones it reports", async () => {
		const { deps, runs, doc } = await setup();
		const first = await runs.apply(
			doc.id,
			"s1",
			report(
				card("ended", { status: "finished", ended: 150 }),
				card("failed", { status: "failed", started: 101 }),
				card("live", { started: 102 }),
			),
		);
		expect(first.removed).toEqual([]);
		// Updating known runs replaces nothing.
		expect(
			(await runs.apply(doc.id, "s1", report(card("live", { started: 102, updated: 120 })))).removed,
		).toEqual([]);
		// A new run, from any session of the document, replaces every ended card it does not report.
		const change = await runs.apply(
			doc.id,
			"s2",
			report(card("failed", { status: "failed", started: 101 }), card("new", { started: 200 })),
		);
		expect(change.removed).toEqual(["ended"]);
		expect((await runs.list(doc.id)).map((c) => c.id)).toEqual(["failed", "live", "new"]);
		expect(deps.eventsOf("runs.updated").at(-1)).toMatchObject({ removed: ["ended"] });
		await runs.apply(doc.id, "s2", report(card("new", { status: "finished", ended: 300, started: 200 })));
		const next = await runs.apply(
			doc.id,
			"s1",
			report(card("live", { started: 102 }), card("newer", { started: 400 })),
		);
		expect(next.removed.sort()).toEqual(["failed", "new"]);
		expect((await runs.list(doc.id)).map((c) => c.id)).toEqual(["live", "newer"]);
	});

	test("reports are validated, and a missing document takes none", async () => {
		const { runs, doc } = await setup();
		for (const bad of [
			{ cards: [] },
			report(card("r", { status: "done" as never })),
			report({ ...card("r"), extra: 1 } as never),
		]) {
			expect(((await runs.apply(doc.id, "s", bad).catch((e) => e)) as RunsError).code).toBe("invalid-runs");
		}
		expect(
			((await runs.apply("nosuchdocumt", "s", report(card("r"))).catch((e) => e)) as RunsError).status,
		).toBe(404);
	});
});
