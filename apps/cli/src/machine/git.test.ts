import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, rmSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { makeTempDir } from "../testing/context";
import { git, makeRepo } from "../testing/git";
import { asyncRefusal as refusal } from "../testing/refusal";
import { describeCheckout, findCheckoutRoot, gitEnv, parseRemoteUrl, sanitizeUrl } from "./git";

// The developer's own git config (insteadOf rewrites, say) must not change what these tests see.
const deps = {
	spawn: execa,
	env: { PATH: process.env.PATH, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
};
let root: string;

beforeAll(() => {
	root = realpathSync(makeTempDir("chopin-git-test-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("describeCheckout on real repositories", () => {
	test("from a subdirectory: root, ssh origin, branch and HEAD", async () => {
		const repo = await makeRepo(join(root, "ssh"), { origin: "git@github.com:octo-org/score.git" });
		mkdirSync(join(repo, "src", "deep"), { recursive: true });
		const info = await describeCheckout(deps, join(repo, "src", "deep"));
		expect(info.root).toBe(repo);
		expect(info.linkedWorktree).toBe(false);
		expect(info.commonDir).toBe(join(repo, ".git"));
		expect(info.remote).toEqual({
			host: "github.com",
			owner: "octo-org",
			name: "score",
			repository: "octo-org/score",
			url: "git@github.com:octo-org/score.git",
		});
		expect(info.branch).toBe("main");
		expect(info.head).toBe(await git(repo, "rev-parse", "HEAD"));
	});

	test("a file inside the checkout works like its directory", async () => {
		const repo = await makeRepo(join(root, "file"), { origin: "https://github.com/octo-org/file" });
		expect((await findCheckoutRoot(deps, join(repo, "README.md"))).root).toBe(repo);
	});

	test("an https origin with a token is parsed and stored without it", async () => {
		const repo = await makeRepo(join(root, "https"), {
			origin: "https://x-access-token:ghs_abcdefghijklmnopqrstuvwxyz0123@github.com/octo-org/score.git",
		});
		const info = await describeCheckout(deps, repo);
		expect(info.remote.repository).toBe("octo-org/score");
		expect(info.remote.url).toBe("https://github.com/octo-org/score.git");
	});

	test("a linked worktree: its own root and branch, the main checkout's common dir", async () => {
		const repo = await makeRepo(join(root, "main-checkout"), {
			origin: "ssh://git@github.com/octo-org/score.git",
		});
		const worktree = join(root, "linked");
		await git(repo, "worktree", "add", "--quiet", "-b", "feature", worktree);
		const info = await describeCheckout(deps, worktree);
		expect(info.root).toBe(worktree);
		expect(info.linkedWorktree).toBe(true);
		expect(info.commonDir).toBe(join(repo, ".git"));
		expect(info.gitDir).toBe(join(repo, ".git", "worktrees", "linked"));
		expect(info.branch).toBe("feature");
		expect(info.remote.repository).toBe("octo-org/score");
	});

	test("detached HEAD has no branch; an unborn repository has no HEAD", async () => {
		const repo = await makeRepo(join(root, "detached"), { origin: "git@github.com:o/detached.git" });
		await git(repo, "checkout", "--quiet", "--detach");
		const detached = await describeCheckout(deps, repo);
		expect(detached.branch).toBeUndefined();
		expect(detached.head).toMatch(/^[0-9a-f]{40}$/);
		const empty = await makeRepo(join(root, "unborn"), {
			origin: "git@github.com:o/unborn.git",
			commit: false,
		});
		const unborn = await describeCheckout(deps, empty);
		expect(unborn.head).toBeUndefined();
		expect(unborn.branch).toBe("main");
	});

	test("not a checkout, missing path", async () => {
		const plain = join(root, "plain");
		mkdirSync(plain);
		const notRepo = await refusal(describeCheckout(deps, plain));
		expect(notRepo).toMatchObject({ code: "not-a-checkout", exitCode: 5 });
		expect(notRepo.message).toBe(`${plain} is not inside a git checkout.`);
		const missing = await refusal(describeCheckout(deps, join(root, "nowhere")));
		expect(missing).toMatchObject({ code: "not-a-checkout" });
		expect(missing.message).toContain("does not exist");
	});

	test("inside .git is not a working tree", async () => {
		const repo = await makeRepo(join(root, "inside-git"), { origin: "git@github.com:o/x.git" });
		expect((await refusal(findCheckoutRoot(deps, join(repo, ".git")))).code).toBe("not-a-checkout");
	});

	test("no origin", async () => {
		const repo = await makeRepo(join(root, "no-origin"));
		const error = await refusal(describeCheckout(deps, repo));
		expect(error).toMatchObject({ code: "no-origin", exitCode: 5 });
		expect(error.hint).toContain("remote add origin");
	});

	test("an origin that names no repository, shown without its password", async () => {
		const repo = await makeRepo(join(root, "odd-origin"), {
			origin: "https://me:hunter2@git.example/just-one",
		});
		const error = await refusal(describeCheckout(deps, repo));
		expect(error.code).toBe("origin-not-recognised");
		expect(error.message).toContain("https://git.example/just-one");
		expect(error.message).not.toContain("hunter2");
	});

	test("GIT_DIR in the environment does not send git to another repository", async () => {
		const repo = await makeRepo(join(root, "env-a"), { origin: "git@github.com:o/a.git" });
		const other = await makeRepo(join(root, "env-b"), { origin: "git@github.com:o/b.git" });
		const info = await describeCheckout(
			{ ...deps, env: { ...deps.env, GIT_DIR: join(other, ".git") } },
			repo,
		);
		expect(info.remote.repository).toBe("o/a");
	});

	test("git missing from PATH is git-not-found", async () => {
		const repo = join(root, "no-git");
		mkdirSync(repo);
		const error = await refusal(
			findCheckoutRoot({ spawn: execa, env: { PATH: join(root, "empty-bin") } }, repo),
		);
		expect(error).toMatchObject({ code: "git-not-found" });
	});
});

describe("parseRemoteUrl", () => {
	test.each<[string, string, string]>([
		["git@github.com:octo-org/score.git", "github.com", "octo-org/score"],
		["git@github.com:octo-org/score", "github.com", "octo-org/score"],
		["github.com:octo-org/score.git", "github.com", "octo-org/score"],
		["https://github.com/octo-org/score.git", "github.com", "octo-org/score"],
		["https://github.com/octo-org/score", "github.com", "octo-org/score"],
		["https://github.com/octo-org/score/", "github.com", "octo-org/score"],
		["http://github.com/octo-org/score.git", "github.com", "octo-org/score"],
		["https://GitHub.com/Octo-Org/Score.git", "github.com", "Octo-Org/Score"],
		["ssh://git@github.com/octo-org/score.git", "github.com", "octo-org/score"],
		["ssh://git@ssh.github.com:443/octo-org/score.git", "github.com", "octo-org/score"],
		["git+ssh://git@github.com/octo-org/score.git", "github.com", "octo-org/score"],
		["git://github.com/octo-org/score.git", "github.com", "octo-org/score"],
		["https://ghe.example.com:8443/team/app.git", "ghe.example.com:8443", "team/app"],
		["ssh://git@ghe.example.com:2222/team/app.git", "ghe.example.com", "team/app"],
		["git@gitlab.example:team/my.repo.git", "gitlab.example", "team/my.repo"],
		["https://github.com/octo_org/score-2.git", "github.com", "octo_org/score-2"],
	])("%s is %s %s", (url, host, repository) => {
		expect(parseRemoteUrl(url)).toMatchObject({ host, repository });
	});

	test.each([
		"/home/me/src/score",
		"../score",
		"file:///home/me/score.git",
		"C:\\src\\score",
		"C:/src/score",
		"https://github.com/octo-org",
		"https://github.com/octo-org/score/extra",
		"https://gitlab.com/group/sub/project.git",
		"git@github.com:score.git",
		"https://github.com/../score",
		"ftp://github.com/o/r.git",
		"",
	])("%j is not recognised", (url) => {
		expect(parseRemoteUrl(url)).toBeUndefined();
	});
});

describe("sanitizeUrl", () => {
	test.each([
		["https://x-access-token:ghs_secret@github.com/o/r.git", "https://github.com/o/r.git"],
		["https://user@github.com/o/r.git", "https://github.com/o/r.git"],
		["ssh://git:pw@host/o/r.git", "ssh://git@host/o/r.git"],
		["git@github.com:o/r.git", "git@github.com:o/r.git"],
		["me:pw@host:o/r.git", "me@host:o/r.git"],
	])("%s -> %s", (input, expected) => {
		expect(sanitizeUrl(input)).toBe(expected);
	});
});

describe("gitEnv", () => {
	test("drops repository-selecting variables and never prompts", () => {
		const env = gitEnv({
			PATH: "/bin",
			GIT_DIR: "/x",
			GIT_WORK_TREE: "/y",
			GIT_SSH_COMMAND: "ssh -i k",
			UNSET: undefined,
		});
		expect(env).toEqual({
			PATH: "/bin",
			GIT_SSH_COMMAND: "ssh -i k",
			GIT_TERMINAL_PROMPT: "0",
			GIT_OPTIONAL_LOCKS: "0",
			LC_ALL: "C",
		});
	});
});
