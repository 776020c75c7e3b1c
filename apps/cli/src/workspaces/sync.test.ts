import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "@chopin/agent-link/clock";
import { execa } from "execa";
import { makeTempDir } from "../testing/context";
import { git, makeRepo } from "../testing/git";
import { CheckoutGate } from "./gate";
import { createRunWorkspace } from "./run-workspace";
import { PeriodicSync, SYNC_INTERVAL_MS, syncWorkspace } from "./sync";

let dir = "";
afterEach(() => {
	if (dir) rmSync(dir, { recursive: true, force: true });
	dir = "";
});
const deps = () => ({
	spawn: execa,
	env: { PATH: process.env.PATH, GIT_CONFIG_GLOBAL: "/dev/null", HOME: dir },
});
const RUN = "run_abcdefghijklmnop";
const scope = { kind: "run" as const, id: RUN };

async function setup() {
	dir = makeTempDir();
	const checkout = await makeRepo(join(dir, "score"));
	const base = await git(checkout, "rev-parse", "HEAD");
	const gate = new CheckoutGate();
	const ws = await createRunWorkspace(deps(), gate, {
		stateDir: join(dir, "state"),
		runId: RUN,
		checkout,
		base,
	});
	return { checkout, base, gate, ws };
}

describe("syncWorkspace", () => {
	test("the workspace's branches come back under refs/remotes/chopin/<id>/; the person's branches, HEAD and index do not move", async () => {
		const { checkout, base, gate, ws } = await setup();
		await git(ws.path, "commit", "--quiet", "--allow-empty", "-m", "one");
		await git(ws.path, "checkout", "--quiet", "-b", "second");
		await git(ws.path, "commit", "--quiet", "--allow-empty", "-m", "two");
		const index = readFileSync(join(checkout, ".git", "index"));
		const result = await syncWorkspace(deps(), gate, { checkout, workspace: ws.path, scope });
		expect(result).toEqual({
			synced: true,
			updated: [`refs/remotes/chopin/${RUN}/chopin/${RUN}`, `refs/remotes/chopin/${RUN}/second`],
		});
		expect(await git(checkout, "log", "--format=%s", `refs/remotes/chopin/${RUN}/second`)).toBe(
			"two\none\nfirst",
		);
		expect(await git(checkout, "for-each-ref", "--format=%(refname)", "refs/heads")).toBe("refs/heads/main");
		expect(await git(checkout, "rev-parse", "main")).toBe(base);
		expect(readFileSync(join(checkout, ".git", "HEAD"), "utf8")).toBe("ref: refs/heads/main\n");
		expect(readFileSync(join(checkout, ".git", "index"))).toEqual(index);
		// Nothing new: nothing updated.
		expect(await syncWorkspace(deps(), gate, { checkout, workspace: ws.path, scope })).toEqual({
			synced: true,
			updated: [],
		});
	});

	test("a rewritten branch is followed, a deleted one stays", async () => {
		const { checkout, gate, ws } = await setup();
		await git(ws.path, "commit", "--quiet", "--allow-empty", "-m", "draft");
		await git(ws.path, "branch", "scratch");
		await syncWorkspace(deps(), gate, { checkout, workspace: ws.path, scope });
		await git(ws.path, "commit", "--quiet", "--amend", "--allow-empty", "-m", "final");
		await git(ws.path, "branch", "-D", "scratch");
		const result = await syncWorkspace(deps(), gate, { checkout, workspace: ws.path, scope });
		expect(result.updated).toEqual([`refs/remotes/chopin/${RUN}/chopin/${RUN}`]);
		expect(await git(checkout, "log", "-1", "--format=%s", `refs/remotes/chopin/${RUN}/chopin/${RUN}`)).toBe(
			"final",
		);
		expect(await git(checkout, "log", "-1", "--format=%s", `refs/remotes/chopin/${RUN}/scratch`)).toBe(
			"draft",
		);
	});

	test("a folder that is no workspace of the connector's is not synced", async () => {
		const { checkout, gate } = await setup();
		const linked = join(dir, "linked");
		await git(checkout, "worktree", "add", "--quiet", "--detach", linked);
		const plain = join(dir, "plain");
		mkdirSync(plain);
		for (const workspace of [linked, plain, join(dir, "missing")]) {
			expect(await syncWorkspace(deps(), gate, { checkout, workspace, scope })).toEqual({
				synced: false,
				updated: [],
			});
		}
	});
});

describe("PeriodicSync", () => {
	test("syncs every interval on the clock and once more when stopped; a failure is reported and the next one tried", async () => {
		const clock = new ManualClock(0);
		const calls: number[] = [];
		const errors: string[] = [];
		const periodic = new PeriodicSync({
			clock,
			sync: async () => {
				calls.push(clock.now());
				if (calls.length === 2) throw new Error("offline");
			},
			onError: (error) => errors.push((error as Error).message),
		}).start();
		await clock.advance(SYNC_INTERVAL_MS - 1);
		expect(calls).toEqual([]);
		await clock.advance(1);
		await clock.advance(SYNC_INTERVAL_MS);
		await clock.advance(SYNC_INTERVAL_MS);
		expect(calls).toEqual([SYNC_INTERVAL_MS, 2 * SYNC_INTERVAL_MS, 3 * SYNC_INTERVAL_MS]);
		expect(errors).toEqual(["offline"]);
		await periodic.stop();
		await periodic.stop();
		expect(calls).toHaveLength(4);
		await clock.advance(10 * SYNC_INTERVAL_MS);
		expect(calls).toHaveLength(4);
	});
});
