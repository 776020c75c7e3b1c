import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { makeTempDir } from "../testing/context";
import { makeRepo } from "../testing/git";
import { CheckoutGate } from "../workspaces/gate";
import { preparePlannerWorkspace } from "../workspaces/planner-workspace";
import { bwrapArgs, type SandboxPaths, sandboxExecProfile, sandboxedArgv } from "./sandbox";
import { checkoutGitDirs, worktreeDir } from "./workspace";

let dir = "";
afterEach(() => {
	if (dir) rmSync(dir, { recursive: true, force: true });
});

const paths: SandboxPaths = {
	checkout: "/src/score",
	checkoutGitDirs: ["/src/score/.git"],
	worktree: "/s/planners/octo/score/d1",
	writable: ["/cache", "/src/score"],
	hidden: ["/s/credential.json"],
	readable: ["/s/tokens"],
};

describe("sandbox", () => {
	test("bwrap: its own PID namespace, read-only root, writes, the checkout read-only over them, the workspace writable, secrets masked", () => {
		expect(bwrapArgs(paths)).toEqual([
			"--die-with-parent",
			"--unshare-pid",
			"--ro-bind",
			"/",
			"/",
			"--dev",
			"/dev",
			"--proc",
			"/proc",
			"--ro-bind-try",
			"/s/tokens",
			"/s/tokens",
			"--bind-try",
			"/cache",
			"/cache",
			"--bind-try",
			"/src/score",
			"/src/score",
			"--ro-bind-try",
			"/src/score",
			"/src/score",
			"--ro-bind-try",
			"/src/score/.git",
			"/src/score/.git",
			"--bind",
			"/s/planners/octo/score/d1",
			"/s/planners/octo/score/d1",
			"--ro-bind-try",
			"/dev/null",
			"/s/credential.json",
		]);
		expect(sandboxedArgv("bwrap", ["my-planner", "--flag"], paths).slice(-3)).toEqual([
			"--",
			"my-planner",
			"--flag",
		]);
		expect(sandboxedArgv("none", ["my-planner"], paths)).toEqual(["my-planner"]);
	});

	test("sandbox-exec: the profile's rules in the order that makes the last one win", () => {
		expect(sandboxExecProfile({ ...paths, worktree: '/s/we"ird\\dir' })).toBe(
			[
				"(version 1)",
				"(allow default)",
				"(deny file-write*)",
				'(allow file-write* (literal "/dev/null") (literal "/dev/tty") (literal "/dev/dtracehelper"))',
				'(allow file-write* (subpath "/private/tmp") (subpath "/private/var/folders"))',
				'(allow file-write* (subpath "/cache") (subpath "/src/score"))',
				'(deny file-write* (subpath "/src/score") (subpath "/src/score/.git"))',
				'(allow file-write* (subpath "/s/we\\"ird\\\\dir"))',
				'(deny file-read* (literal "/s/credential.json"))',
				"",
			].join("\n"),
		);
		const argv = sandboxedArgv("sandbox-exec", ["my-planner"], paths);
		expect(argv[0]).toBe("sandbox-exec");
		expect(argv[1]).toBe("-p");
		expect(argv.at(-1)).toBe("my-planner");
	});

	test.skipIf(!Bun.which("bwrap"))(
		"bwrap for real: the checkout and its .git refuse writes, the workspace takes a branch and a commit, the credential reads empty",
		async () => {
			dir = makeTempDir();
			const env = { PATH: process.env.PATH, GIT_CONFIG_GLOBAL: "/dev/null", HOME: dir };
			const deps = { spawn: execa, env };
			const checkout = await makeRepo(join(dir, "score"));
			const worktree = worktreeDir(join(dir, "base"), "octo/score", "abcdefghijkm");
			const prepared = await preparePlannerWorkspace(deps, new CheckoutGate(), {
				checkout,
				path: worktree,
				documentId: "abcdefghijkm",
				sandboxed: true,
			});
			expect(prepared).toEqual({ kind: "workspace", action: "created" });
			const credential = join(dir, "base", "credential.json");
			writeFileSync(credential, "machine secret");
			const argv = sandboxedArgv(
				"bwrap",
				[
					"sh",
					"-c",
					`echo x > "${checkout}/README.md" 2>/dev/null && echo checkout-written; echo y > "${checkout}/.git/HEAD" 2>/dev/null && echo head-written; git -C "${checkout}" update-ref refs/heads/main HEAD 2>/dev/null && echo ref-written; echo z > "${worktree}/out.txt" && echo worktree-written; git -C "${worktree}" checkout -q -b planner/work && echo branched; git -C "${worktree}" -c user.name=p -c user.email=p@x commit -q --allow-empty -m planned && echo committed; git -C "${worktree}" worktree add -q "${worktree}/../other" 2>/dev/null && echo worktree-added; cat "${credential}"; echo end`,
				],
				{
					checkout,
					checkoutGitDirs: await checkoutGitDirs(deps, checkout),
					worktree,
					// Asking to write the checkout changes nothing: it stays read-only.
					writable: [checkout],
					hidden: [credential],
				},
			);
			const result = await execa(argv[0]!, argv.slice(1), { reject: false, env });
			expect(result.stdout.split("\n")).toEqual(["worktree-written", "branched", "committed", "end"]);
			expect(readFileSync(join(checkout, "README.md"), "utf8")).toBe("test\n");
			expect(readFileSync(join(worktree, "out.txt"), "utf8")).toBe("z\n");
			// The person's HEAD did not move and the backend's branch is the workspace's alone.
			expect(readFileSync(join(checkout, ".git", "HEAD"), "utf8")).toBe("ref: refs/heads/main\n");
			expect(existsSync(join(checkout, ".git", "refs", "heads", "planner"))).toBe(false);
			expect(existsSync(join(worktree, ".git", "refs", "heads", "planner", "work"))).toBe(true);
		},
	);
});
