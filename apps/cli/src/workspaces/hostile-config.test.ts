// A workspace's .git is the agent's to write. Here it configures every way to make git start a program, and the
// connector's own git on it (bringing its branches back, a later launch, list, prune) starts none of them.
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { makeTempDir } from "../testing/context";
import { git, makeRepo } from "../testing/git";
import { CheckoutGate } from "./gate";
import { guardedGit } from "./guarded-git";
import { listWorkspaces } from "./list";
import { preparePlannerWorkspace } from "./planner-workspace";
import { pruneRuns } from "./prune";
import { writeRunRecord } from "./run-record";
import { createRunWorkspace } from "./run-workspace";
import { syncWorkspace } from "./sync";

let dir = "";
afterEach(() => {
	if (dir) rmSync(dir, { recursive: true, force: true });
	dir = "";
});

const HOOKS = [
	"applypatch-msg",
	"pre-applypatch",
	"post-applypatch",
	"pre-commit",
	"pre-merge-commit",
	"prepare-commit-msg",
	"commit-msg",
	"post-commit",
	"pre-rebase",
	"post-checkout",
	"post-merge",
	"pre-push",
	"pre-receive",
	"update",
	"proc-receive",
	"post-receive",
	"post-update",
	"reference-transaction",
	"push-to-checkout",
	"pre-auto-gc",
	"post-rewrite",
	"sendemail-validate",
	"fsmonitor-watchman",
	"post-index-change",
];

/** Writes a program that records its name in `fired` when anything starts it. */
function trap(bin: string, fired: string, name: string): string {
	const path = join(bin, name);
	writeFileSync(path, `#!/bin/sh\necho ${name} >> "${fired}"\ncat > /dev/null 2>&1\nexit 0\n`);
	chmodSync(path, 0o755);
	return path;
}

/** What an agent could write into its workspace's .git: each setting that makes git run a program. */
async function poison(workspace: string, root: string): Promise<string> {
	const fired = join(root, "fired.txt");
	const bin = join(root, "bin");
	const hooks = join(root, "hooks");
	mkdirSync(bin, { recursive: true });
	mkdirSync(hooks, { recursive: true });
	for (const hook of HOOKS) {
		trap(hooks, fired, hook);
		writeFileSync(join(workspace, ".git", "hooks", hook), readFileSync(join(hooks, hook)));
		chmodSync(join(workspace, ".git", "hooks", hook), 0o755);
	}
	const settings: [string, string][] = [
		["core.fsmonitor", trap(bin, fired, "fsmonitor")],
		["core.hooksPath", hooks],
		["uploadpack.packObjectsHook", trap(bin, fired, "pack-objects-hook")],
		["core.alternateRefsCommand", trap(bin, fired, "alternate-refs")],
		["core.sshCommand", trap(bin, fired, "ssh")],
		["core.gitProxy", trap(bin, fired, "git-proxy")],
		["credential.helper", trap(bin, fired, "credential")],
		["core.askPass", trap(bin, fired, "askpass")],
		["core.pager", trap(bin, fired, "pager")],
		["core.editor", trap(bin, fired, "editor")],
		["gpg.program", trap(bin, fired, "gpg")],
		["commit.gpgSign", "true"],
		["diff.external", trap(bin, fired, "diff-external")],
		["filter.evil.clean", trap(bin, fired, "filter-clean")],
		["filter.evil.smudge", trap(bin, fired, "filter-smudge")],
		["filter.evil.process", trap(bin, fired, "filter-process")],
		["remote.origin.uploadpack", trap(bin, fired, "remote-uploadpack")],
		["remote.origin.receivepack", trap(bin, fired, "remote-receivepack")],
		["remote.origin.vcs", "evil"],
		["protocol.allow", "always"],
		["protocol.ext.allow", "always"],
		[`url.ext::${trap(bin, fired, "ext-url")} %S.insteadOf`, "/"],
		["fetch.fsckObjects", "false"],
		["fetch.negotiationAlgorithm", "noop"],
		["transfer.fsckObjects", "false"],
		["uploadpack.allowAnySHA1InWant", "true"],
		["gc.auto", "1"],
		["maintenance.auto", "true"],
		["core.untrackedCache", "true"],
		["include.path", join(root, "more.config")],
	];
	for (const [key, value] of settings) await git(workspace, "config", "--add", key, value);
	writeFileSync(join(root, "more.config"), `[core]\n\tfsmonitor = ${join(bin, "fsmonitor")}\n`);
	trap(bin, fired, "git-remote-evil");
	writeFileSync(join(workspace, ".gitattributes"), "* filter=evil diff=evil\n");
	await git(workspace, "config", "diff.evil.textconv", trap(bin, fired, "textconv"));
	return fired;
}

describe("what an agent configures in its workspace never runs in the connector's git", () => {
	test("sync, a later launch, list and prune start none of it, and the work still comes back", async () => {
		dir = makeTempDir();
		const env = {
			PATH: `${join(dir, "agent", "bin")}:${process.env.PATH}`,
			GIT_CONFIG_GLOBAL: "/dev/null",
			HOME: dir,
		};
		const deps = { spawn: execa, env };
		const checkout = await makeRepo(join(dir, "score"));
		const base = await git(checkout, "rev-parse", "HEAD");
		const gate = new CheckoutGate();
		const state = join(dir, "state");
		const runId = "run_abcdefghijklmnop";
		const ws = await createRunWorkspace(deps, gate, { stateDir: state, runId, checkout, base });
		// The agent's work first (with git untouched), then its traps.
		writeFileSync(join(ws.path, "work.txt"), "work\n");
		await git(ws.path, "add", "work.txt");
		await git(ws.path, "commit", "--quiet", "-m", "agent work");
		const fired = await poison(ws.path, join(dir, "agent"));
		// A Planner's workspace in the same state, poisoned the same way.
		const plannerPath = join(state, "planners", "octo", "score", "abcdefghijkm");
		await preparePlannerWorkspace(deps, gate, {
			checkout,
			path: plannerPath,
			documentId: "abcdefghijkm",
			sandboxed: true,
		});
		await poison(plannerPath, join(dir, "agent"));

		const synced = await syncWorkspace(deps, gate, {
			checkout,
			workspace: ws.path,
			scope: { kind: "run", id: runId },
		});
		expect(synced.updated).toEqual([`refs/remotes/chopin/${runId}/chopin/${runId}`]);
		expect(
			await git(checkout, "log", "-1", "--format=%s", `refs/remotes/chopin/${runId}/chopin/${runId}`),
		).toBe("agent work");
		expect(
			await preparePlannerWorkspace(deps, gate, {
				checkout,
				path: plannerPath,
				documentId: "abcdefghijkm",
				sandboxed: true,
			}),
		).toEqual({ kind: "workspace", action: "none" });
		await syncWorkspace(deps, gate, {
			checkout,
			workspace: plannerPath,
			scope: { kind: "planner", id: "abcdefghijkm" },
		});
		expect(listWorkspaces(state).planners[0]).toMatchObject({ kind: "workspace", head: expect.any(String) });
		writeRunRecord(state, {
			version: 1,
			id: runId,
			kind: "build",
			document: { id: "abcdefghijkm", url: "https://chopin.example/d/abcdefghijkm" },
			repository: "octo/score",
			checkout,
			workspace: ws.path,
			branch: ws.branch!,
			base,
			status: "finished",
			createdAt: 0,
			endedAt: 1,
		});
		const pruned = await pruneRuns(deps, gate, { stateDir: state, now: 10, olderThanMs: 0, dryRun: false });
		expect(pruned.removed.map((r) => r.keepRef)).toEqual(["removed"]);
		expect(existsSync(ws.path)).toBe(false);

		// The guard itself: a ref written in a poisoned workspace runs no reference-transaction hook.
		expect((await guardedGit(deps, plannerPath, ["update-ref", "refs/heads/y", "HEAD"])).exitCode).toBe(0);
		expect(existsSync(fired) ? readFileSync(fired, "utf8") : "").toBe("");
		// The traps are real: plain git in the workspace starts them.
		await execa("git", ["-C", plannerPath, "update-ref", "refs/heads/x", "HEAD"], { env, stdin: "ignore" });
		expect(readFileSync(fired, "utf8")).toContain("reference-transaction");
	});
});
