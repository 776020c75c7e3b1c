// Where a document's backend works: the checkout (the one named, else a clone under <base>/repos made once and
// fetched before each launch) and its worktree at <base>/planners/<owner>/<repo>/<document id>, never removed.
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { execa } from "execa";
import { runGit } from "../machine/git";
import { CliError } from "../program/errors";

export interface WorkspaceDeps {
	spawn: typeof execa;
	env: Readonly<Record<string, string | undefined>>;
}

export function cloneDir(baseDir: string, repository: string): string {
	const [owner, name] = repository.split("/");
	return join(baseDir, "repos", owner!, name!);
}

export function worktreeDir(baseDir: string, repository: string, documentId: string): string {
	const [owner, name] = repository.split("/");
	return join(baseDir, "planners", owner!, name!, documentId);
}

/**
 * The clone for a repository no --checkout names: made once, fetched again before each launch.
 * A fetch that fails (offline) is logged by the caller and the clone used as it is.
 */
export async function ensureClone(
	deps: WorkspaceDeps,
	options: { dir: string; url: string },
): Promise<{ cloned: boolean; fetchError?: string }> {
	if (existsSync(join(options.dir, ".git"))) {
		const fetched = await runGit(deps, options.dir, ["fetch", "--quiet", "--prune", "origin"]);
		return fetched.exitCode === 0 ? { cloned: false } : { cloned: false, fetchError: fetched.stderr };
	}
	mkdirSync(dirname(options.dir), { recursive: true });
	const cloned = await runGit(deps, dirname(options.dir), ["clone", "--quiet", options.url, options.dir]);
	if (cloned.exitCode !== 0) {
		throw new CliError(
			"planner-clone-failed",
			`Could not clone ${options.url} into ${options.dir}: ${firstLine(cloned.stderr)}.`,
			"Check that this machine can fetch the repository (its git credentials), or name a checkout with `chopin connect --planner ... <checkout>`.",
		);
	}
	return { cloned: true };
}

export interface PreparedWorktree {
	/** The worktree's own git dir, when the folder is a worktree. */
	gitDir?: string;
	created: boolean;
}

/**
 * The worktree's parent folders always; the worktree itself only in the sandbox, where the
 * backend cannot add it: a linked worktree of the checkout, detached at its HEAD, made when the
 * folder is missing or empty and left as it is otherwise (a folder that holds something and is
 * no worktree included).
 */
export async function prepareWorktree(
	deps: WorkspaceDeps,
	options: { checkout: string; worktree: string; sandboxed: boolean },
): Promise<PreparedWorktree> {
	mkdirSync(dirname(options.worktree), { recursive: true });
	if (!options.sandboxed) return { created: false, ...(await ownGitDir(deps, options.worktree)) };
	if (!isEmptyOrMissing(options.worktree))
		return { created: false, ...(await ownGitDir(deps, options.worktree)) };
	// A worktree whose folder was deleted is still registered; prune forgets it so add can reuse the path.
	await runGit(deps, options.checkout, ["worktree", "prune"]);
	const added = await runGit(deps, options.checkout, [
		"worktree",
		"add",
		"--quiet",
		"--detach",
		options.worktree,
		"HEAD",
	]);
	if (added.exitCode !== 0) {
		throw new CliError(
			"planner-worktree-failed",
			`Could not add the Planner worktree ${options.worktree} to ${options.checkout}: ${firstLine(added.stderr)}.`,
			"Check that the checkout has a commit and that the folder is not used by something else.",
		);
	}
	return { created: true, ...(await ownGitDir(deps, options.worktree)) };
}

/** A checkout's git dir and common dir, absolute: both stay read-only in the sandbox. */
export async function checkoutGitDirs(deps: WorkspaceDeps, checkout: string): Promise<string[]> {
	const result = await runGit(deps, checkout, ["rev-parse", "--absolute-git-dir", "--git-common-dir"]);
	if (result.exitCode !== 0) return [join(checkout, ".git")];
	const [gitDir, common] = result.stdout.split("\n").map((line) => line.trim());
	return [...new Set([gitDir!, resolve(checkout, common ?? gitDir!)])];
}

/** The parts of a repository's common git dir a commit or a new branch writes (see SandboxPaths.sharedGitWritable). */
export function sharedGitWritable(commonDir: string): string[] {
	return ["objects", "refs", "logs"].map((part) => join(commonDir, part));
}

async function ownGitDir(deps: WorkspaceDeps, worktree: string): Promise<{ gitDir?: string }> {
	if (!existsSync(join(worktree, ".git"))) return {};
	const result = await runGit(deps, worktree, ["rev-parse", "--absolute-git-dir"]);
	return result.exitCode === 0 ? { gitDir: result.stdout.trim() } : {};
}

function isEmptyOrMissing(dir: string): boolean {
	try {
		return readdirSync(dir).length === 0;
	} catch {
		return true;
	}
}

function firstLine(text: string): string {
	return text.trim().split("\n")[0]?.replace(/\.$/, "") || "git gave no reason";
}
