import { afterEach, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "../testing/context";
import { makeRepo } from "../testing/git";
import { NO_PUSH_SCHEME, runEnvironment } from "./run-env";

const facts = {
	url: "https://chopin.example",
	run: "run_abcdefghijklmnop",
	document: "https://chopin.example/d/abcdefghijkl",
	checkout: "/src/score",
	workspace: "/state/runs/run_abcdefghijklmnop/workspace",
};
const github = {
	token: "token-for-the-build",
	expiresAt: Date.UTC(2026, 11, 2, 12),
	file: "/state/tokens/gh",
};
const base = {
	PATH: process.env.PATH,
	HOME: "/home/ana",
	GH_TOKEN: "person-gh-token",
	SSH_AUTH_SOCK: "/run/ssh.sock",
	CHOPIN_RUN_TOKEN: "stale",
	GIT_CONFIG_COUNT: "1",
	GIT_CONFIG_KEY_0: "user.name",
	GIT_CONFIG_VALUE_0: "Ana",
};

function git(cwd: string, args: string[], env: Record<string, string>) {
	const run = spawnSync("git", args, { cwd, env: { ...env, GIT_CONFIG_NOSYSTEM: "1" }, encoding: "utf8" });
	return { code: run.status, signal: run.signal, out: `${run.stdout}${run.stderr}` };
}

/** Each test's temp dirs, removed after it. */
const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("a run's environment", () => {
	test("a build keeps the person's own environment and gets the run's facts and its GitHub token", () => {
		const env = runEnvironment(base, { ...facts, kind: "build", github });
		expect(env).toMatchObject({
			HOME: "/home/ana",
			GH_TOKEN: "person-gh-token",
			CHOPIN_URL: facts.url,
			CHOPIN_RUN: facts.run,
			CHOPIN_RUN_KIND: "build",
			CHOPIN_DOCUMENT: facts.document,
			CHOPIN_CHECKOUT: facts.checkout,
			CHOPIN_WORKTREE: facts.workspace,
			CHOPIN_GITHUB_TOKEN: github.token,
			CHOPIN_GITHUB_TOKEN_EXPIRES_AT: "2026-12-02T12:00:00.000Z",
			CHOPIN_GITHUB_TOKEN_FILE: github.file,
			GIT_CONFIG_COUNT: "1",
		});
		// The connector's own CHOPIN_* never leaks through (the run credential travels to the bridge only).
		expect(env.CHOPIN_RUN_TOKEN).toBeUndefined();
	});

	test("an investigation gets no push credential, no GitHub token, and keeps the connector's git config entries", () => {
		const env = runEnvironment(base, { ...facts, kind: "investigation", github });
		expect(env.GH_TOKEN).toBeUndefined();
		expect(env.SSH_AUTH_SOCK).toBeUndefined();
		expect(env.CHOPIN_GITHUB_TOKEN).toBeUndefined();
		expect(env.GIT_CONFIG_KEY_0).toBe("user.name");
		expect(env.GIT_CONFIG_KEY_1).toBe("credential.helper");
		expect(Number(env.GIT_CONFIG_COUNT)).toBeGreaterThan(2);
	});

	test("with the investigation's environment every kind of push fails at once, without touching the network", async () => {
		const root = makeTempDir("chopin-run-env-");
		dirs.push(root);
		const bare = join(root, "remote.git");
		spawnSync("git", ["init", "-q", "--bare", bare]);
		for (const origin of [
			bare,
			"git@github.com:octo/score.git",
			"https://github.com/octo/score.git",
			"ssh://git@github.com/octo/score",
		]) {
			const repo = await makeRepo(join(root, `repo-${origin.length}`), { origin });
			const plain = { PATH: process.env.PATH ?? "", HOME: root };
			const env = runEnvironment(plain, { ...facts, kind: "investigation" });
			const push = git(repo, ["push", "origin", "HEAD:refs/heads/pushed"], env);
			// git fails with 128 when it finds no helper for the scheme; when the missing helper has already gone as
			// git writes to it, git dies of SIGPIPE instead (183 times in 800 pushes, 8 at a time, here). Either way
			// nothing was pushed and nothing reached the network.
			const failed = push.code === 128 || (push.code === null && push.signal === "SIGPIPE");
			expect({ origin, failed, code: push.code, signal: push.signal }).toMatchObject({
				origin,
				failed: true,
			});
			expect(push.out).toContain(NO_PUSH_SCHEME);
		}
		// The same push with a build's environment goes through (to the local bare repository).
		const repo = await makeRepo(join(root, "repo-build"), { origin: bare });
		const env = runEnvironment({ PATH: process.env.PATH ?? "", HOME: root }, { ...facts, kind: "build" });
		expect(git(repo, ["push", "-q", "origin", "HEAD:refs/heads/pushed"], env).code).toBe(0);
	});
});
