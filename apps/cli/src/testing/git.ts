// Real git repositories in temp directories for tests.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";

const GIT_ENV = {
	GIT_AUTHOR_NAME: "Test",
	GIT_AUTHOR_EMAIL: "test@example.com",
	GIT_COMMITTER_NAME: "Test",
	GIT_COMMITTER_EMAIL: "test@example.com",
	GIT_CONFIG_GLOBAL: "/dev/null",
	GIT_CONFIG_NOSYSTEM: "1",
};

export async function git(cwd: string, ...args: string[]): Promise<string> {
	const result = await execa("git", args, { cwd, env: GIT_ENV, stdin: "ignore" });
	return result.stdout.trim();
}

/** A repository with one commit on `main` and, when given, an origin URL. */
export async function makeRepo(
	dir: string,
	options: { origin?: string; commit?: boolean } = {},
): Promise<string> {
	mkdirSync(dir, { recursive: true });
	await git(dir, "init", "--quiet", "--initial-branch=main");
	if (options.commit ?? true) {
		writeFileSync(join(dir, "README.md"), "test\n");
		await git(dir, "add", "README.md");
		await git(dir, "commit", "--quiet", "-m", "first");
	}
	if (options.origin) await git(dir, "remote", "add", "origin", options.origin);
	return dir;
}
