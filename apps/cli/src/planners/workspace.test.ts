import { afterEach, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { makeTempDir } from "../testing/context";
import { git, makeRepo } from "../testing/git";
import { CheckoutGate } from "../workspaces/gate";
import { checkoutGitDirs, cloneDir, ensureClone, worktreeDir } from "./workspace";

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
		expect(await ensureClone(deps(), new CheckoutGate(), { dir: target, url: upstream })).toEqual({
			cloned: true,
		});
		writeFileSync(join(upstream, "NEW.md"), "new\n");
		await git(upstream, "add", "NEW.md");
		await git(upstream, "commit", "--quiet", "-m", "second");
		expect(await ensureClone(deps(), new CheckoutGate(), { dir: target, url: upstream })).toEqual({
			cloned: false,
		});
		expect(await git(target, "log", "--oneline", "origin/main")).toContain("second");
	});

	test("a clone that fails says so", async () => {
		dir = makeTempDir();
		const target = cloneDir(join(dir, "base"), "octo/score");
		await expect(
			ensureClone(deps(), new CheckoutGate(), { dir: target, url: join(dir, "missing") }),
		).rejects.toMatchObject({
			code: "planner-clone-failed",
		});
	});

	test("a checkout's git dirs: one for a regular checkout", async () => {
		dir = makeTempDir();
		const checkout = await makeRepo(join(dir, "score"));
		expect(await checkoutGitDirs(deps(), checkout)).toEqual([join(checkout, ".git")]);
	});
});
