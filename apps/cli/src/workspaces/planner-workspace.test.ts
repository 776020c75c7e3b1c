import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { makeTempDir } from "../testing/context";
import { git, makeRepo } from "../testing/git";
import { CheckoutGate } from "./gate";
import { folderKind, preparePlannerWorkspace } from "./planner-workspace";

let dir = "";
afterEach(() => {
	if (dir) rmSync(dir, { recursive: true, force: true });
	dir = "";
});
const deps = () => ({
	spawn: execa,
	env: { PATH: process.env.PATH, GIT_CONFIG_GLOBAL: "/dev/null", HOME: dir },
});
const DOC = "abcdefghijkm";

async function setup() {
	dir = makeTempDir();
	const checkout = await makeRepo(join(dir, "score"));
	const path = join(dir, "state", "planners", "octo", "score", DOC);
	const prepare = (sandboxed = true) =>
		preparePlannerWorkspace(deps(), new CheckoutGate(), { checkout, path, documentId: DOC, sandboxed });
	return { checkout, path, prepare };
}

describe("preparePlannerWorkspace", () => {
	test("sandboxed: a workspace made on the first launch, detached at the checkout's HEAD, then left as it is", async () => {
		const { checkout, path, prepare } = await setup();
		expect(await prepare()).toEqual({ kind: "workspace", action: "created" });
		expect(statSync(join(path, ".git")).isDirectory()).toBe(true);
		expect(await git(path, "rev-parse", "HEAD")).toBe(await git(checkout, "rev-parse", "HEAD"));
		expect(await git(path, "rev-parse", "--abbrev-ref", "HEAD")).toBe("HEAD");
		expect(await git(checkout, "rev-parse", `refs/chopin/keep/planner/${DOC}`)).toBe(
			await git(path, "rev-parse", "HEAD"),
		);
		writeFileSync(join(path, "work.txt"), "mine\n");
		expect(await prepare()).toEqual({ kind: "workspace", action: "none" });
		expect(readFileSync(join(path, "work.txt"), "utf8")).toBe("mine\n");
	});

	test("an empty folder becomes a workspace; one that holds something else is left alone", async () => {
		const { path, prepare } = await setup();
		mkdirSync(path, { recursive: true });
		expect(await prepare()).toEqual({ kind: "workspace", action: "created" });
		rmSync(path, { recursive: true });
		mkdirSync(path);
		writeFileSync(join(path, "notes.txt"), "x");
		expect(await prepare()).toEqual({ kind: "other", action: "none" });
		expect(existsSync(join(path, ".git"))).toBe(false);
	});

	test("without a sandbox only the parent folders are made: the backend makes its worktree", async () => {
		const { path, prepare } = await setup();
		expect(await prepare(false)).toEqual({ kind: "missing", action: "none" });
		expect(existsSync(path)).toBe(false);
		expect(existsSync(join(path, ".."))).toBe(true);
	});

	test("an old linked worktree is converted in place: same branch and commit, its edits kept, its registration gone", async () => {
		const { checkout, path, prepare } = await setup();
		// What the previous version made, and a backend then did in it.
		mkdirSync(join(path, ".."), { recursive: true });
		await git(checkout, "worktree", "add", "--quiet", "--detach", path, "HEAD");
		expect(folderKind(path)).toBe("linked-worktree");
		await git(path, "checkout", "--quiet", "-b", "planner/work");
		writeFileSync(join(path, "plan.md"), "plan\n");
		await git(path, "add", "plan.md");
		await git(path, "commit", "--quiet", "-m", "plan");
		const head = await git(path, "rev-parse", "HEAD");
		writeFileSync(join(path, "README.md"), "edited\n");
		writeFileSync(join(path, "new.txt"), "new\n");

		expect(await prepare(false)).toEqual({ kind: "linked-worktree", action: "none" });
		expect(await prepare()).toEqual({ kind: "workspace", action: "converted" });
		expect(statSync(join(path, ".git")).isDirectory()).toBe(true);
		expect(await git(path, "symbolic-ref", "HEAD")).toBe("refs/heads/planner/work");
		expect(await git(path, "rev-parse", "HEAD")).toBe(head);
		// (The helper trims the first line's leading space.)
		expect(await git(path, "status", "--porcelain")).toBe("M README.md\n?? new.txt");
		expect(await git(checkout, "worktree", "list", "--porcelain")).not.toContain(path);
		expect(existsSync(join(checkout, ".git", "worktrees", DOC))).toBe(false);
		// The branch it made stays in the checkout (it is the person's now); the keep ref holds its commit.
		expect(await git(checkout, "rev-parse", "planner/work")).toBe(head);
		expect(await git(checkout, "rev-parse", `refs/chopin/keep/planner/${DOC}`)).toBe(head);
		expect(await prepare()).toEqual({ kind: "workspace", action: "none" });
	});

	test("a linked worktree of another repository is left as it is, with the reason", async () => {
		const { path, prepare } = await setup();
		const other = await makeRepo(join(dir, "other"));
		mkdirSync(join(path, ".."), { recursive: true });
		await git(other, "worktree", "add", "--quiet", "--detach", path, "HEAD");
		const result = await prepare();
		expect(result).toMatchObject({ kind: "linked-worktree", action: "none" });
		expect(result.note).toContain("another repository");
		expect(readFileSync(join(path, ".git"), "utf8")).toStartWith("gitdir:");
	});
});
