// The isolation promise, for real: from inside bubblewrap, as a Planner backend's launch builds it and as a run's
// workspace is sandboxed, every write under the person's checkout (its .git above all) fails, their branches, HEAD and
// index stay as they were, and git in the workspace works; the connector then brings the work back under its namespace.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Backoff } from "@chopin/agent-link/backoff";
import { ManualClock } from "@chopin/agent-link/clock";
import { execa } from "execa";
import { sandboxedArgv } from "../planners/sandbox";
import { PlannerSupervisor } from "../planners/supervisor";
import { checkoutGitDirs } from "../planners/workspace";
import { ServerApi } from "../server-link/server-api";
import { readLog } from "../testing/cli-process";
import { createTestContext, makeTempDir, type TestContext } from "../testing/context";
import { git, makeRepo } from "../testing/git";
import { expectProbe, GIT_IDENTITY, HAS_BWRAP, PROBE, secondCommit, snapshot } from "../testing/isolation";
import { type MachineServer, makeCliHome, pairHome, startMachineServer } from "../testing/machine-server";
import { CheckoutGate } from "./gate";
import { createRunWorkspace } from "./run-workspace";
import { syncWorkspace } from "./sync";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.skipIf(!HAS_BWRAP)("isolation in the sandbox", () => {
	test("a run's workspace: nothing under the checkout is writable, the workspace is, and the sync brings the commit back", async () => {
		const dir = makeTempDir();
		cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
		const env = {
			PATH: process.env.PATH,
			GIT_CONFIG_GLOBAL: "/dev/null",
			GIT_CONFIG_NOSYSTEM: "1",
			HOME: dir,
		};
		const deps = { spawn: execa, env };
		const checkout = await makeRepo(join(dir, "score"), { origin: "git@github.com:octo/score.git" });
		const other = await secondCommit(checkout);
		const base = await git(checkout, "rev-parse", "HEAD");
		const gate = new CheckoutGate();
		const runId = "run_abcdefghijklmnop";
		const ws = await createRunWorkspace(deps, gate, { stateDir: join(dir, "state"), runId, checkout, base });
		const tmp = join(dir, "state", "tmp", runId);
		mkdirSync(tmp, { recursive: true });
		const gitBefore = snapshot(join(checkout, ".git"));
		const argv = sandboxedArgv("bwrap", [PROBE], {
			checkout,
			checkoutGitDirs: await checkoutGitDirs(deps, checkout),
			worktree: ws.path,
			writable: [],
			hidden: [],
			tmp,
		});
		const probe = await execa(argv[0]!, argv.slice(1), {
			reject: false,
			stdin: "ignore",
			env: {
				...env,
				...GIT_IDENTITY,
				CHOPIN_CHECKOUT: checkout,
				CHOPIN_WORKTREE: ws.path,
				PROBE_OTHER: other,
				TMPDIR: tmp,
			},
		});
		expectProbe(probe.stdout.split("\n"));
		// Not one byte under the checkout's .git changed; the person's edit is still there.
		expect(snapshot(join(checkout, ".git"))).toEqual(gitBefore);
		expect(readFileSync(join(checkout, "SECOND.md"), "utf8")).toBe("edited, not committed\n");

		const synced = await syncWorkspace(deps, gate, {
			checkout,
			workspace: ws.path,
			scope: { kind: "run", id: runId },
		});
		expect(synced.updated.sort()).toEqual(
			[`chopin/${runId}`, "probe/second", "probe/work"]
				.map((b) => `refs/remotes/chopin/${runId}/${b}`)
				.sort(),
		);
		expect(await git(checkout, "log", "-1", "--format=%s", `refs/remotes/chopin/${runId}/probe/work`)).toBe(
			"probe commit",
		);
		expect(await git(checkout, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads")).toBe(
			`refs/heads/main ${base}`,
		);
		expect(readFileSync(join(checkout, ".git", "HEAD"), "utf8")).toBe("ref: refs/heads/main\n");
	});

	test("a Planner backend launched by the supervisor: the same, and its branches come back after it exits", async () => {
		const clock = new ManualClock(Date.now());
		const machines: MachineServer = await startMachineServer({
			clock,
			env: { LOCAL_PLANNER_CREDENTIALS: "on" },
		});
		cleanups.push(() => machines.server.close());
		const home = await makeCliHome();
		cleanups.push(() => rmSync(home.root, { recursive: true, force: true }));
		const { credential } = await pairHome(machines, home);
		const ctx: TestContext = createTestContext({ env: home.env });
		cleanups.push(() => ctx.cleanup());
		const document = await machines.server.context.domain.documents.create({
			repository: "octo/score",
			title: "Plan",
			createdBy: "ana",
		});
		const checkout = home.checkout;
		const other = await secondCommit(checkout);
		const head = await git(checkout, "rev-parse", "HEAD");
		const person = () => ({
			heads: git(checkout, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags"),
			head: readFileSync(join(checkout, ".git", "HEAD"), "utf8"),
			index: readFileSync(join(checkout, ".git", "index")).toString("base64"),
			config: readFileSync(join(checkout, ".git", "config"), "utf8"),
			hooks: snapshot(join(checkout, ".git", "hooks")),
			edit: readFileSync(join(checkout, "SECOND.md"), "utf8"),
		});
		const before = person();
		const api = new ServerApi({ ...ctx, clock }, machines.server.url);
		const supervisor = new PlannerSupervisor(
			{ ref: document.id, checkout, repository: "octo/score", source: "config" },
			{
				clock,
				log: ctx.log,
				secrets: ctx.secrets,
				platform: "linux",
				server: machines.server.url,
				baseDir: home.paths.stateDir,
				command: [PROBE],
				env: { ...GIT_IDENTITY, PROBE_OTHER: other },
				baseEnv: { PATH: process.env.PATH, HOME: home.env.HOME, GIT_CONFIG_GLOBAL: "/dev/null" },
				sandbox: { kind: "bwrap", writable: [checkout], hidden: [home.paths.credentialFile] },
				git: { spawn: ctx.spawn, env: home.env },
				gate: new CheckoutGate(),
				cloneUrl: () => {
					throw new Error("no clone expected");
				},
				plannerCredential: (doc) => api.plannerCredential(credential, doc),
				githubToken: () => api.githubToken(credential),
				onEvent: () => {},
				onChange: () => {},
				onMachineRefused: () => {},
				backoff: Backoff.exponential({ initial: 1_000, max: 300_000 }),
				graceMs: 5_000,
			},
		);
		cleanups.push(() => supervisor.stop("test over"));
		void supervisor.start();
		const synced = `refs/remotes/chopin/${document.id}/probe/work`;
		// The backend exits once it has probed; the supervisor then syncs and waits on the (manual) backoff.
		for (let i = 0; i < 2000; i++) {
			const done = await execa("git", ["-C", checkout, "rev-parse", "--verify", "--quiet", synced], {
				reject: false,
			});
			if (done.exitCode === 0 && supervisor.state === "backoff") break;
			await Bun.sleep(10);
		}
		const lines = readLog(ctx.paths.logFile)
			.filter((l) => l.stream === "stdout")
			.map((l) => String(l.msg));
		expectProbe(lines);
		expect(await git(checkout, "log", "-1", "--format=%s", synced)).toBe("probe commit");
		expect(await git(checkout, "rev-parse", `refs/remotes/chopin/${document.id}/probe/second`)).toBe(
			await git(checkout, "rev-parse", synced),
		);
		const after = person();
		expect({ ...after, heads: await after.heads }).toEqual({ ...before, heads: await before.heads });
		expect(await before.heads).toBe(`refs/heads/main ${head}`);
	}, 60_000);
});
