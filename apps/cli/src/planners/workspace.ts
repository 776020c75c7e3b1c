// Where a document's backend works: the checkout (the one named, else a clone under <base>/repos made once and
// fetched before each launch, through the gate) and CHOPIN_WORKTREE at <base>/planners/<owner>/<repo>/<document id>.
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { execa } from "execa";
import { runGit } from "../machine/git";
import { CliError } from "../program/errors";
import type { CheckoutGate } from "../workspaces/gate";
import { guardedGit } from "../workspaces/guarded-git";

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
 * The clone for a repository no --checkout names: made once, fetched again before each launch, both
 * through the gate (a run may be writing the same clone's refs). A fetch that fails (offline) is
 * logged by the caller and the clone used as it is.
 */
export async function ensureClone(
	deps: WorkspaceDeps,
	gate: CheckoutGate,
	options: { dir: string; url: string },
): Promise<{ cloned: boolean; fetchError?: string }> {
	return gate.run(join(options.dir, ".git"), async () => {
		if (existsSync(join(options.dir, ".git"))) {
			const fetched = await guardedGit(deps, options.dir, ["fetch", "--quiet", "--prune", "origin"]);
			return fetched.exitCode === 0 ? { cloned: false } : { cloned: false, fetchError: fetched.stderr };
		}
		mkdirSync(dirname(options.dir), { recursive: true });
		const cloned = await guardedGit(deps, dirname(options.dir), [
			"clone",
			"--quiet",
			options.url,
			options.dir,
		]);
		if (cloned.exitCode !== 0) {
			throw new CliError(
				"planner-clone-failed",
				`Could not clone ${options.url} into ${options.dir}: ${firstLine(cloned.stderr)}.`,
				"Check that this machine can fetch the repository (its git credentials), or name a checkout with `chopin connect --planner ... <checkout>`.",
			);
		}
		return { cloned: true };
	});
}

/** A checkout's git dir and common dir, absolute: both stay read-only in the sandbox. */
export async function checkoutGitDirs(deps: WorkspaceDeps, checkout: string): Promise<string[]> {
	const result = await runGit(deps, checkout, ["rev-parse", "--absolute-git-dir", "--git-common-dir"]);
	if (result.exitCode !== 0) return [join(checkout, ".git")];
	const [gitDir, common] = result.stdout.split("\n").map((line) => line.trim());
	return [...new Set([gitDir!, resolve(checkout, common ?? gitDir!)])];
}

function firstLine(text: string): string {
	return text.trim().split("\n")[0]?.replace(/\.$/, "") || "git gave no reason";
}
