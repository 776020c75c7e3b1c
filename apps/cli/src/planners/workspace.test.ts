import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { makeTempDir } from "../testing/context";
import { git, makeRepo } from "../testing/git";
import { checkoutGitDirs, cloneDir, ensureClone, prepareWorktree, worktreeDir } from "./workspace";

let dir = "";
afterEach(() => {
	if (dir) rmSync(dir, { recursive: true, force: true });
});
const deps = () => ({
	spawn: execa,
	env: { PATH: process.env.PATH, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", HOME: dir },
});

describe("workspace", () => {
	test("paths under the base dir", () => {
		expect(cloneDir("/s", "octo/score")).toBe("/s/repos/octo/score");
		expect(worktreeDir("/s", "octo/score", "abcdefghijkm")).toBe("/s/planners/octo/score/abcdefghijkm");
	});

	test("a clone is made once and fetched before each later launch", async () => {
		dir = makeTempDir();
		const upstream = await makeRepo(join(dir, "upstream"));
		const target = cloneDir(join(dir, "base"), "octo/score");
		expect(await ensureClone(deps(), { dir: target, url: upstream })).toEqual({ cloned: true });
		writeFileSync(join(upstream, "NEW.md"), "new\n");
		await git(upstream, "add", "NEW.md");
		await git(upstream, "commit", "--quiet", "-m", "second");
		expect(await ensureClone(deps(), { dir: target, url: upstream })).toEqual({ cloned: false });
		expect(await git(target, "log", "--oneline", "origin/main")).toContain("second");
	});

	test("a clone that fails says so", async () => {
		dir = makeTempDir();
		const target = cloneDir(join(dir, "base"), "octo/score");
		await expect(ensureClone(deps(), { dir: target, url: join(dir, "missing") })).rejects.toMatchObject({
			code: "planner-clone-failed",
		});
	});

	test("sandboxed: a detached linked worktree made once, then left as it is", async () => {
		dir = makeTempDir();
		const checkout = await makeRepo(join(dir, "score"));
		const worktree = worktreeDir(join(dir, "base"), "octo/score", "abcdefghijkm");
		const first = await prepareWorktree(deps(), { checkout, worktree, sandboxed: true });
		expect(first.created).toBe(true);
		expect(first.gitDir).toBe(join(checkout, ".git", "worktrees", "abcdefghijkm"));
		expect(readFileSync(join(worktree, "README.md"), "utf8")).toBe("test\n");
		expect(await git(worktree, "rev-parse", "--abbrev-ref", "HEAD")).toBe("HEAD");
		writeFileSync(join(worktree, "work.txt"), "mine\n");
		const second = await prepareWorktree(deps(), { checkout, worktree, sandboxed: true });
		expect(second).toEqual({ created: false, gitDir: first.gitDir! });
		expect(existsSync(join(worktree, "work.txt"))).toBe(true);
	});

	test("a folder that holds something and is no worktree is left alone", async () => {
		dir = makeTempDir();
		const checkout = await makeRepo(join(dir, "score"));
		const worktree = worktreeDir(join(dir, "base"), "octo/score", "abcdefghijkm");
		mkdirSync(worktree, { recursive: true });
		writeFileSync(join(worktree, "notes.txt"), "x");
		expect(await prepareWorktree(deps(), { checkout, worktree, sandboxed: true })).toEqual({
			created: false,
		});
	});

	test("without a sandbox only the parent folders are made", async () => {
		dir = makeTempDir();
		const checkout = await makeRepo(join(dir, "score"));
		const worktree = worktreeDir(join(dir, "base"), "octo/score", "abcdefghijkm");
		expect(await prepareWorktree(deps(), { checkout, worktree, sandboxed: false })).toEqual({
			created: false,
		});
		expect(existsSync(worktree)).toBe(false);
		expect(existsSync(join(dir, "base", "planners", "octo", "score"))).toBe(true);
	});

	test("a checkout's git dirs: one for a regular checkout", async () => {
		dir = makeTempDir();
		const checkout = await makeRepo(join(dir, "score"));
		expect(await checkoutGitDirs(deps(), checkout)).toEqual([join(checkout, ".git")]);
	});
});
