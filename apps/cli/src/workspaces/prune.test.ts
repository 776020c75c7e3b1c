import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { makeTempDir } from "../testing/context";
import { git, makeRepo } from "../testing/git";
import { runRecord } from "../testing/run-record";
import { CheckoutGate } from "./gate";
import { preparePlannerWorkspace } from "./planner-workspace";
import { pruneRuns } from "./prune";
import { DEFAULT_PRUNE_AGE_MS, formatDuration, parseDuration } from "./prune-age";
import { type RunRecord, writeRunRecord } from "./run-record";
import { createRunWorkspace } from "./run-workspace";
import { syncWorkspace } from "./sync";

let dir = "";
afterEach(() => {
	if (dir) rmSync(dir, { recursive: true, force: true });
	dir = "";
});
const DAY = 86_400_000;
const NOW = 100 * DAY;
const deps = () => ({
	spawn: execa,
	env: { PATH: process.env.PATH, GIT_CONFIG_GLOBAL: "/dev/null", HOME: dir },
});

async function setup() {
	dir = makeTempDir();
	const checkout = await makeRepo(join(dir, "score"));
	const base = await git(checkout, "rev-parse", "HEAD");
	const state = join(dir, "state");
	const gate = new CheckoutGate();
	const run = async (letter: string, fields: Partial<RunRecord>) => {
		const id = `run_${letter.repeat(16)}`;
		const ws = await createRunWorkspace(deps(), gate, { stateDir: state, runId: id, checkout, base });
		await git(ws.path, "commit", "--quiet", "--allow-empty", "-m", `work of ${id}`);
		await syncWorkspace(deps(), gate, { checkout, workspace: ws.path, scope: { kind: "run", id } });
		writeRunRecord(state, runRecord({ id, checkout, workspace: ws.path, base, createdAt: 0, ...fields }));
		return id;
	};
	const old = await run("a", { status: "finished", endedAt: NOW - 8 * DAY });
	const running = await run("b", { status: "running" });
	const paused = await run("c", { status: "paused" });
	const recent = await run("d", { status: "failed", endedAt: NOW - DAY });
	mkdirSync(join(state, "runs", `run_${"e".repeat(16)}`));
	await preparePlannerWorkspace(deps(), gate, {
		checkout,
		path: join(state, "planners", "octo", "score", "abcdefghijkm"),
		documentId: "abcdefghijkm",
		sandboxed: true,
	});
	const keepRefs = () => git(checkout, "for-each-ref", "--format=%(refname:lstrip=3)", "refs/chopin/keep");
	const synced = () => git(checkout, "for-each-ref", "--format=%(refname)", "refs/remotes/chopin");
	return { checkout, state, gate, old, running, paused, recent, keepRefs, synced };
}

describe("pruneRuns", () => {
	test("removes ended runs older than the cutoff and their keep refs; live runs, recent ones and Planner workspaces stay", async () => {
		const s = await setup();
		const syncedBefore = await s.synced();
		const dry = await pruneRuns(deps(), s.gate, {
			stateDir: s.state,
			now: NOW,
			olderThanMs: DEFAULT_PRUNE_AGE_MS,
			dryRun: true,
		});
		expect(dry.removed.map((r) => [r.record.id, r.keepRef])).toEqual([[s.old, undefined]]);
		expect(existsSync(join(s.state, "runs", s.old))).toBe(true);

		const done = await pruneRuns(deps(), s.gate, {
			stateDir: s.state,
			now: NOW,
			olderThanMs: DEFAULT_PRUNE_AGE_MS,
			dryRun: false,
		});
		expect(done.removed.map((r) => [r.record.id, r.keepRef])).toEqual([[s.old, "removed"]]);
		expect(done.kept).toEqual([
			{ id: s.running, reason: "it has not ended (running)" },
			{ id: s.paused, reason: "it has not ended (paused)" },
			{ id: s.recent, reason: "it ended less than 7d ago" },
			{ id: `run_${"e".repeat(16)}`, reason: "it has no run.json" },
		]);
		expect(readdirSync(join(s.state, "runs")).sort()).toEqual(
			[s.running, s.paused, s.recent, `run_${"e".repeat(16)}`].sort(),
		);
		expect((await s.keepRefs()).split("\n")).toEqual([
			"planner/abcdefghijkm",
			`run/${s.running}`,
			`run/${s.paused}`,
			`run/${s.recent}`,
		]);
		// The work brought back stays the person's.
		expect(await s.synced()).toBe(syncedBefore);
		expect(
			await git(s.checkout, "log", "-1", "--format=%s", `refs/remotes/chopin/${s.old}/chopin/${s.old}`),
		).toBe(`work of ${s.old}`);
		expect(existsSync(join(s.state, "planners", "octo", "score", "abcdefghijkm", ".git"))).toBe(true);

		const all = await pruneRuns(deps(), s.gate, {
			stateDir: s.state,
			now: NOW,
			olderThanMs: 0,
			dryRun: false,
		});
		expect(all.removed.map((r) => r.record.id)).toEqual([s.recent]);
	}, 30_000);

	test("a run whose checkout is gone still goes, saying why its keep ref could not", async () => {
		const s = await setup();
		rmSync(s.checkout, { recursive: true, force: true });
		const done = await pruneRuns(deps(), s.gate, {
			stateDir: s.state,
			now: NOW,
			olderThanMs: DAY,
			dryRun: false,
		});
		expect(done.removed.map((r) => r.record.id)).toEqual([s.old, s.recent]);
		expect(done.removed[0]!.keepRef).toEqual({ problem: expect.stringContaining("does not exist") });
		expect(existsSync(join(s.state, "runs", s.old))).toBe(false);
	}, 30_000);
});

describe("durations", () => {
	test("parsed and written in whole units", () => {
		expect(parseDuration("7d")).toBe(7 * DAY);
		expect(parseDuration("36h")).toBe(36 * 3_600_000);
		expect(parseDuration("90m")).toBe(90 * 60_000);
		expect(parseDuration("2w")).toBe(14 * DAY);
		expect(parseDuration("0")).toBe(0);
		for (const bad of ["", "7", "d", "7 days", "-1d", "1.5d"]) expect(parseDuration(bad)).toBeUndefined();
		expect(formatDuration(DEFAULT_PRUNE_AGE_MS)).toBe("7d");
		expect(formatDuration(36 * 3_600_000)).toBe("36h");
	});
});
