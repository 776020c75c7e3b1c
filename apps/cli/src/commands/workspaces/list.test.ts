import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { runCli } from "../../program/program";
import { createTestContext, type TestContext } from "../../testing/context";
import { makeRepo } from "../../testing/git";
import { parse } from "../../testing/program";
import { runRecord } from "../../testing/run-record";
import { CheckoutGate } from "../../workspaces/gate";
import { preparePlannerWorkspace } from "../../workspaces/planner-workspace";
import { writeRunRecord } from "../../workspaces/run-record";
import { workspacesReportSchema } from "./list";

let ctx: TestContext;
afterEach(() => ctx?.cleanup());

describe("workspaces list: parse half", () => {
	test("--json, and help with examples", async () => {
		ctx = createTestContext();
		expect(await parse(["workspaces", "list"], ctx)).toEqual({
			command: "workspaces list",
			options: { json: false },
		});
		expect(await parse(["workspaces", "list", "--json"], ctx)).toMatchObject({ options: { json: true } });
		await parse(["workspaces", "list", "--help"], ctx);
		expect(ctx.stdout.text()).toContain("$ chopin workspaces list");
	});
});

describe("workspaces list: run half", () => {
	test("nothing yet: a note on stderr, nothing on stdout", async () => {
		ctx = createTestContext();
		await runCli(["workspaces", "list"], ctx);
		expect(ctx.stdout.text()).toBe("");
		expect(ctx.stderr.text()).toBe(`No workspaces in ${ctx.paths.stateDir}.\n`);
	});

	test("runs from their records and Planner workspaces as found, with their paths; --json in the schema's shape", async () => {
		ctx = createTestContext();
		const state = ctx.paths.stateDir;
		const checkout = await makeRepo(join(ctx.root, "score"));
		await preparePlannerWorkspace(
			{ spawn: execa, env: { PATH: process.env.PATH, GIT_CONFIG_GLOBAL: "/dev/null", HOME: ctx.root } },
			new CheckoutGate(),
			{
				checkout,
				path: join(state, "planners", "octo", "score", "abcdefghijkm"),
				documentId: "abcdefghijkm",
				sandboxed: true,
			},
		);
		const finished = runRecord({
			id: "run_aaaaaaaaaaaaaaaa",
			status: "finished",
			createdAt: Date.UTC(2026, 0, 1),
			endedAt: Date.UTC(2026, 0, 2),
			workspace: join(state, "runs", "run_aaaaaaaaaaaaaaaa", "workspace"),
		});
		writeRunRecord(state, finished);
		mkdirSync(finished.workspace);
		mkdirSync(join(state, "runs", "run_bbbbbbbbbbbbbbbb"));

		await runCli(["workspaces", "list"], ctx);
		expect(ctx.stdout.text()).toBe(
			[
				"Run workspaces (2):",
				"  run_bbbbbbbbbbbbbbbb  cannot be read: it has no run.json",
				`    ${join(state, "runs", "run_bbbbbbbbbbbbbbbb")}`,
				"  run_aaaaaaaaaaaaaaaa  build finished, ended 2026-01-02T00:00:00.000Z  octo/score  on chopin/run_aaaaaaaaaaaaaaaa",
				`    ${finished.workspace}`,
				"Planner workspaces (1):",
				"  abcdefghijkm  octo/score  workspace at " +
					(await execa("git", ["-C", checkout, "rev-parse", "HEAD"])).stdout.slice(0, 12),
				`    ${join(state, "planners", "octo", "score", "abcdefghijkm")}`,
				"",
			].join("\n"),
		);

		const json = createTestContext({ env: { CHOPIN_STATE_DIR: state } });
		try {
			await runCli(["workspaces", "list", "--json"], json);
			const report = workspacesReportSchema.parse(JSON.parse(json.stdout.text()));
			expect(json.stderr.text()).toBe("");
			expect(report.runs[1]).toEqual({
				id: finished.id,
				path: finished.workspace,
				present: true,
				problem: null,
				kind: "build",
				status: "finished",
				document: finished.document,
				repository: "octo/score",
				checkout: finished.checkout,
				branch: finished.branch,
				base: finished.base,
				createdAt: "2026-01-01T00:00:00.000Z",
				endedAt: "2026-01-02T00:00:00.000Z",
			});
			expect(report.runs[0]).toMatchObject({
				id: "run_bbbbbbbbbbbbbbbb",
				problem: "it has no run.json",
				kind: null,
			});
			expect(report.planners).toEqual([
				{
					document: "abcdefghijkm",
					repository: "octo/score",
					path: join(state, "planners", "octo", "score", "abcdefghijkm"),
					kind: "workspace",
					head: expect.stringMatching(/^[0-9a-f]{40}$/),
				},
			]);
		} finally {
			json.cleanup();
		}
	});
});
