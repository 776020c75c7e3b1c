import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../../program/program";
import { createTestContext, type TestContext } from "../../testing/context";
import { git, makeRepo } from "../../testing/git";
import { parse, parseError } from "../../testing/program";
import { runRecord } from "../../testing/run-record";
import { CheckoutGate } from "../../workspaces/gate";
import { writeRunRecord } from "../../workspaces/run-record";
import { createRunWorkspace } from "../../workspaces/run-workspace";

let ctx: TestContext;
afterEach(() => ctx?.cleanup());
const DAY = 86_400_000;

describe("workspaces prune: parse half", () => {
	test("a week by default; --older-than in whole units; --dry-run", async () => {
		ctx = createTestContext();
		expect(await parse(["workspaces", "prune"], ctx)).toEqual({
			command: "workspaces prune",
			options: { olderThan: 7 * DAY, dryRun: false },
		});
		expect(await parse(["workspaces", "prune", "--older-than", "12h", "--dry-run"], ctx)).toEqual({
			command: "workspaces prune",
			options: { olderThan: 12 * 3_600_000, dryRun: true },
		});
		expect(await parse(["workspaces", "prune", "--older-than=0"], ctx)).toMatchObject({
			options: { olderThan: 0 },
		});
	});

	test.each([["7"], ["a week"], ["-1d"], ["1.5d"]])("--older-than %j is refused", async (value) => {
		ctx = createTestContext();
		const error = await parseError(["workspaces", "prune", "--older-than", value], ctx);
		expect(error).toMatchObject({
			code: "option-invalid",
			exitCode: 2,
			message: `--older-than ${JSON.stringify(value)} is not a duration.`,
		});
		expect(error.hint).toContain("7d");
	});
});

describe("workspaces prune: run half", () => {
	test("removes the old ended run's workspace and keep ref, says so on stdout, keeps the running one", async () => {
		ctx = createTestContext();
		await ctx.clock.advance(30 * DAY);
		const now = ctx.clock.now();
		const state = ctx.paths.stateDir;
		const checkout = await makeRepo(join(ctx.root, "score"));
		const base = await git(checkout, "rev-parse", "HEAD");
		const deps = { spawn: ctx.spawn, env: { ...ctx.env, GIT_CONFIG_GLOBAL: "/dev/null" } };
		const gate = new CheckoutGate();
		const make = async (id: string, fields: Parameters<typeof runRecord>[0]) => {
			const ws = await createRunWorkspace(deps, gate, { stateDir: state, runId: id, checkout, base });
			writeRunRecord(state, runRecord({ id, checkout, workspace: ws.path, base, createdAt: 0, ...fields }));
			return ws.path;
		};
		const old = await make("run_aaaaaaaaaaaaaaaa", { status: "stopped", endedAt: now - 10 * DAY });
		const live = await make("run_bbbbbbbbbbbbbbbb", { status: "running" });

		await runCli(["workspaces", "prune", "--dry-run"], ctx);
		const ended = new Date(now - 10 * DAY).toISOString();
		expect(ctx.stdout.text()).toBe(
			`Would remove run_aaaaaaaaaaaaaaaa (build stopped, ended ${ended}): ${old}\n`,
		);
		expect(ctx.stderr.text()).toBe(
			"Would remove 1 run workspace; kept 1 (not ended, ended within 7d, or unreadable).\n",
		);
		expect(existsSync(old)).toBe(true);

		await runCli(["workspaces", "prune"], ctx);
		expect(ctx.stdout.text()).toEndWith(
			`Removed run_aaaaaaaaaaaaaaaa (build stopped, ended ${ended}): ${old}\n`,
		);
		expect(existsSync(old)).toBe(false);
		expect(existsSync(live)).toBe(true);
		expect(await git(checkout, "for-each-ref", "--format=%(refname)", "refs/chopin")).toBe(
			"refs/chopin/keep/run/run_bbbbbbbbbbbbbbbb",
		);

		await runCli(["workspaces", "prune"], ctx);
		expect(ctx.stderr.text()).toEndWith(
			"No run ended more than 7d ago: nothing to remove; kept 1 (not ended, ended within 7d, or unreadable).\n",
		);
	});
});
