// A run's workspace at <state>/runs/<run id>/workspace, on its own branch chopin/<run id> at the exact base commit,
// and its removal with the keep ref that held its base (the branches brought back stay the person's).
import { renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ensurePrivateDir } from "../local/paths";
import { findCheckoutRoot, type GitDeps } from "../machine/git";
import { createWorkspace, type Workspace } from "./create";
import type { CheckoutGate } from "./gate";
import { firstLine, guardedGit } from "./guarded-git";
import { keepRef } from "./refs";
import { type RunRecord, runDir, runsDir, runWorkspacePath } from "./run-record";

/** The branch a run starts on in its workspace, unless the run manager names another. */
export function runBranch(runId: string): string {
	return `chopin/${runId}`;
}

/**
 * Makes the run's workspace: `<state>/runs/<run id>/workspace` (the folders 0700), the base commit
 * checked out on `chopin/<run id>` (or `branch`), held in the checkout by `refs/chopin/keep/run/<run id>`.
 * The caller writes run.json (status `preparing`) before, so a crash in between leaves a record.
 */
export async function createRunWorkspace(
	deps: GitDeps,
	gate: CheckoutGate,
	options: { stateDir: string; runId: string; checkout: string; base: string; branch?: string },
): Promise<Workspace> {
	ensurePrivateDir(runsDir(options.stateDir));
	ensurePrivateDir(runDir(options.stateDir, options.runId));
	return createWorkspace(deps, gate, {
		checkout: options.checkout,
		path: runWorkspacePath(options.stateDir, options.runId),
		base: options.base,
		branch: options.branch ?? runBranch(options.runId),
		scope: { kind: "run", id: options.runId },
	});
}

/** Prefix of a run folder being removed: renamed first, so no one finds a half-deleted run. */
export const REMOVING_PREFIX = ".removing-";

/**
 * Removes a run's folder (workspace and record) and its keep ref. The folder is renamed away first,
 * then the keep ref deleted through the gate, then the folder deleted. `refs/remotes/chopin/<run id>/*`
 * stay: they are the person's way to the work. Returns what happened to the keep ref: `removed`, or
 * why it could not be (the checkout is gone, git refused); the folder goes either way.
 */
export async function removeRunWorkspace(
	deps: GitDeps,
	gate: CheckoutGate,
	options: { stateDir: string; record: RunRecord },
): Promise<{ keepRef: "removed" | { problem: string } }> {
	const { record, stateDir } = options;
	const away = join(runsDir(stateDir), `${REMOVING_PREFIX}${record.id}-${process.pid}`);
	renameSync(runDir(stateDir, record.id), away);
	let outcome: "removed" | { problem: string };
	try {
		const root = await findCheckoutRoot(deps, record.checkout);
		const ref = keepRef({ kind: "run", id: record.id });
		const deleted = await gate.run(root.commonDir, () =>
			guardedGit(deps, root.root, ["update-ref", "-d", ref]),
		);
		outcome = deleted.exitCode === 0 ? "removed" : { problem: firstLine(deleted.stderr) };
	} catch (error) {
		outcome = { problem: (error as Error).message.replace(/\.$/, "") };
	}
	rmSync(away, { recursive: true, force: true });
	return { keepRef: outcome };
}
