import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { makeTempDir } from "../testing/context";
import { git, makeRepo } from "../testing/git";
import { createWorkspace } from "./create";
import { CheckoutGate } from "./gate";
import { createRunWorkspace, runBranch } from "./run-workspace";

let dir = "";
afterEach(() => {
	if (dir) rmSync(dir, { recursive: true, force: true });
	dir = "";
});
const deps = () => ({
	spawn: execa,
	env: { PATH: process.env.PATH, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", HOME: dir },
});
const RUN = "run_abcdefghijklmnop";

/** What of the person's checkout a workspace must never change: files, index, HEAD, branches, status. */
async function personState(checkout: string) {
	return {
		readme: readFileSync(join(checkout, "README.md"), "utf8"),
		index: readFileSync(join(checkout, ".git", "index")).toString("base64"),
		head: readFileSync(join(checkout, ".git", "HEAD"), "utf8"),
		heads: await git(checkout, "for-each-ref", "refs/heads", "refs/tags", "refs/remotes"),
		status: await git(checkout, "status", "--porcelain"),
	};
}

describe("createWorkspace", () => {
	test("a run's workspace: its own git dir borrowing the checkout's objects, at the exact commit, on its own branch", async () => {
		dir = makeTempDir();
		const checkout = await makeRepo(join(dir, "score"), {
			origin: "https://x-access-token:ghs_secretsecretsecret@github.com/octo/score.git",
		});
		const first = await git(checkout, "rev-parse", "HEAD");
		writeFileSync(join(checkout, "SECOND.md"), "2\n");
		await git(checkout, "add", "SECOND.md");
		await git(checkout, "commit", "--quiet", "-m", "second");
		await git(checkout, "tag", "v1");
		await git(checkout, "branch", "feature");
		// The person's local edits: a changed tracked file, a staged new file, an untracked one.
		writeFileSync(join(checkout, "README.md"), "edited by the person\n");
		writeFileSync(join(checkout, "STAGED.md"), "staged\n");
		await git(checkout, "add", "STAGED.md");
		writeFileSync(join(checkout, "untracked.txt"), "mine\n");
		const before = await personState(checkout);

		const state = join(dir, "state");
		const ws = await createRunWorkspace(deps(), new CheckoutGate(), {
			stateDir: state,
			runId: RUN,
			checkout,
			base: first,
		});
		const path = join(state, "runs", RUN, "workspace");
		expect(ws).toEqual({
			path,
			checkout,
			commonDir: join(checkout, ".git"),
			base: first,
			branch: runBranch(RUN),
			keepRef: `refs/chopin/keep/run/${RUN}`,
		});
		expect(statSync(join(state, "runs", RUN)).mode & 0o777).toBe(0o700);
		// Its own git dir (a folder, not a linked worktree's file), borrowing the checkout's objects.
		expect(statSync(join(path, ".git")).isDirectory()).toBe(true);
		expect(readFileSync(join(path, ".git", "objects", "info", "alternates"), "utf8").trim()).toBe(
			join(checkout, ".git", "objects"),
		);
		expect(readdirSync(join(path, ".git", "objects", "pack"))).toEqual([]);
		expect(await git(path, "rev-parse", "HEAD")).toBe(first);
		expect(await git(path, "symbolic-ref", "HEAD")).toBe("refs/heads/chopin/run_abcdefghijklmnop");
		expect(readFileSync(join(path, "README.md"), "utf8")).toBe("test\n");
		expect(await git(path, "status", "--porcelain")).toBe("");
		// Only its own branch: none of the person's branches or tags, which the person may delete.
		expect(await git(path, "for-each-ref", "--format=%(refname)")).toBe(
			"refs/heads/chopin/run_abcdefghijklmnop",
		);
		// origin is the checkout's, without the token (a workspace's config is no 0600 file).
		expect(await git(path, "remote", "get-url", "origin")).toBe("https://github.com/octo/score.git");
		expect(readFileSync(join(path, ".git", "config"), "utf8")).not.toContain("ghs_");
		// The keep ref holds the base; the person's checkout is otherwise exactly as it was.
		expect(await git(checkout, "rev-parse", `refs/chopin/keep/run/${RUN}`)).toBe(first);
		expect(await personState(checkout)).toEqual(before);
		expect(readFileSync(join(checkout, "untracked.txt"), "utf8")).toBe("mine\n");
	});

	test("a Planner's workspace is detached at the checkout's HEAD; a checkout without origin gives one without", async () => {
		dir = makeTempDir();
		const checkout = await makeRepo(join(dir, "score"));
		const path = join(dir, "planners", "octo", "score", "abcdefghijkm");
		const ws = await createWorkspace(deps(), new CheckoutGate(), {
			checkout,
			path,
			base: "HEAD",
			scope: { kind: "planner", id: "abcdefghijkm" },
		});
		const head = await git(checkout, "rev-parse", "HEAD");
		expect(ws.base).toBe(head);
		expect(await git(path, "rev-parse", "--abbrev-ref", "HEAD")).toBe("HEAD");
		expect(await git(path, "rev-parse", "HEAD")).toBe(head);
		expect(await git(path, "for-each-ref")).toBe("");
		expect(await git(path, "remote")).toBe("");
		expect(await git(checkout, "rev-parse", "refs/chopin/keep/planner/abcdefghijkm")).toBe(head);
	});

	test("a base commit the checkout lacks is fetched from its origin into the keep ref", async () => {
		dir = makeTempDir();
		const upstream = await makeRepo(join(dir, "upstream"));
		await execa("git", ["clone", "--quiet", upstream, join(dir, "score")], { env: deps().env });
		const checkout = join(dir, "score");
		// A commit pushed to origin after the person last fetched.
		await git(upstream, "checkout", "--quiet", "-b", "pushed");
		writeFileSync(join(upstream, "NEW.md"), "new\n");
		await git(upstream, "add", "NEW.md");
		await git(upstream, "commit", "--quiet", "-m", "pushed later");
		const base = await git(upstream, "rev-parse", "HEAD");
		const before = await personState(checkout);
		const ws = await createRunWorkspace(deps(), new CheckoutGate(), {
			stateDir: join(dir, "state"),
			runId: RUN,
			checkout,
			base,
		});
		expect(await git(ws.path, "rev-parse", "HEAD")).toBe(base);
		expect(readFileSync(join(ws.path, "NEW.md"), "utf8")).toBe("new\n");
		expect(await git(checkout, "rev-parse", `refs/chopin/keep/run/${RUN}`)).toBe(base);
		expect(await personState(checkout)).toEqual(before);
		// Fetched without FETCH_HEAD, which the person's `git pull` reads.
		expect(existsSync(join(checkout, ".git", "FETCH_HEAD"))).toBe(false);
	});

	test("a base nobody has is workspace-base-missing; a folder that holds something is workspace-create-failed", async () => {
		dir = makeTempDir();
		const checkout = await makeRepo(join(dir, "score"), { origin: join(dir, "nowhere") });
		await expect(
			createRunWorkspace(deps(), new CheckoutGate(), {
				stateDir: join(dir, "state"),
				runId: RUN,
				checkout,
				base: "0".repeat(40),
			}),
		).rejects.toMatchObject({ code: "workspace-base-missing" });
		const path = join(dir, "taken");
		await makeRepo(path, { commit: false });
		await expect(
			createWorkspace(deps(), new CheckoutGate(), {
				checkout,
				path,
				base: "HEAD",
				scope: { kind: "planner", id: "abcdefghijkm" },
			}),
		).rejects.toMatchObject({ code: "workspace-create-failed" });
		await expect(
			createWorkspace(deps(), new CheckoutGate(), {
				checkout,
				path: join(dir, "other"),
				base: "main",
				scope: { kind: "planner", id: "abcdefghijkm" },
			}),
		).rejects.toMatchObject({ code: "workspace-create-failed" });
	});

	test("the --shared caveat: the person deletes the base's branch and gcs, and the keep ref keeps the workspace whole", async () => {
		dir = makeTempDir();
		const checkout = await makeRepo(join(dir, "score"));
		const commitOnBranch = async (branch: string) => {
			await git(checkout, "checkout", "--quiet", "-b", branch);
			writeFileSync(join(checkout, `${branch}.md`), `${branch}\n`);
			await git(checkout, "add", `${branch}.md`);
			await git(checkout, "commit", "--quiet", "-m", branch);
			const sha = await git(checkout, "rev-parse", "HEAD");
			await git(checkout, "checkout", "--quiet", "main");
			return sha;
		};
		const kept = await commitOnBranch("tmp");
		const lost = await commitOnBranch("tmp2");
		const gate = new CheckoutGate();
		const state = join(dir, "state");
		const ws = await createRunWorkspace(deps(), gate, { stateDir: state, runId: RUN, checkout, base: kept });
		const other = "run_bbbbbbbbbbbbbbbb";
		const unkept = await createRunWorkspace(deps(), gate, {
			stateDir: state,
			runId: other,
			checkout,
			base: lost,
		});
		// The second workspace loses its keep ref: it stands for what a linked clone without one would be.
		await git(checkout, "update-ref", "-d", `refs/chopin/keep/run/${other}`);
		await git(checkout, "branch", "-D", "tmp", "tmp2");
		await git(checkout, "reflog", "expire", "--expire=now", "--all");
		await git(checkout, "gc", "--quiet", "--prune=now");
		expect(await git(ws.path, "fsck", "--no-progress")).toBe("");
		expect(await git(ws.path, "log", "--oneline", "-1")).toContain("tmp");
		writeFileSync(join(ws.path, "work.md"), "work\n");
		await git(ws.path, "add", "work.md");
		await git(ws.path, "commit", "--quiet", "-m", "work");
		expect(await git(ws.path, "log", "--format=%s")).toBe("work\ntmp\nfirst");
		// Without its keep ref, the same gc broke the other one (git help clone, --shared).
		await expect(git(unkept.path, "log", "-1")).rejects.toThrow();
	});
});
