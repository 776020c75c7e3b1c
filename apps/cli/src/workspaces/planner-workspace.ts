// A Planner document's CHOPIN_WORKTREE: in the sandbox a workspace the connector makes (its own git dir, detached at
// the checkout's HEAD) when the folder is missing or empty, left as it is later; an old linked worktree is converted.
import {
	existsSync,
	lstatSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	realpathSync,
	renameSync,
	rmSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Clock } from "@chopin/agent-link/clock";
import type { Logger } from "../local/log";
import { findCheckoutRoot, type GitDeps } from "../machine/git";
import { cloneBorrowing, createWorkspace, holdBase, step } from "./create";
import type { CheckoutGate } from "./gate";
import { guardedGit } from "./guarded-git";
import { keepRef } from "./refs";
import { PeriodicSync, syncWorkspace } from "./sync";

/** What the folder at CHOPIN_WORKTREE is. */
export type FolderKind = "missing" | "empty" | "workspace" | "linked-worktree" | "other";

/** Read from the file system only: nothing the folder's git config says is run to find out. */
export function folderKind(path: string): FolderKind {
	let entries: string[];
	try {
		entries = readdirSync(path);
	} catch {
		return existsSync(path) ? "other" : "missing";
	}
	if (entries.length === 0) return "empty";
	try {
		const git = lstatSync(join(path, ".git"));
		if (git.isDirectory()) return "workspace";
		if (git.isFile() && readFileSync(join(path, ".git"), "utf8").startsWith("gitdir:"))
			return "linked-worktree";
	} catch {
		// No .git: something else.
	}
	return "other";
}

export interface PlannerWorkspace {
	/** What the folder is now. */
	kind: FolderKind;
	/** What the connector did: made it, converted an old linked worktree, or nothing. */
	action: "created" | "converted" | "none";
	/** Why nothing was done to a linked worktree (it belongs to another repository, or has no commit). */
	note?: string;
}

/**
 * The parent folders always. Without a sandbox nothing else: the backend makes its own linked
 * worktree, as the spec says. In the sandbox: a missing or empty folder becomes a workspace detached
 * at the checkout's HEAD (keep ref `refs/chopin/keep/planner/<document id>`); a workspace is left as
 * it is; a linked worktree of this checkout (what the previous version made) is converted; anything
 * else is left alone.
 */
export async function preparePlannerWorkspace(
	deps: GitDeps,
	gate: CheckoutGate,
	options: { checkout: string; path: string; documentId: string; sandboxed: boolean },
): Promise<PlannerWorkspace> {
	const { path } = options;
	mkdirSync(dirname(path), { recursive: true });
	const kind = folderKind(path);
	if (!options.sandboxed) return { kind, action: "none" };
	const scope = { kind: "planner" as const, id: options.documentId };
	if (kind === "missing" || kind === "empty") {
		await createWorkspace(deps, gate, { checkout: options.checkout, path, base: "HEAD", scope });
		return { kind: "workspace", action: "created" };
	}
	if (kind !== "linked-worktree") return { kind, action: "none" };
	const note = await convertLinkedWorktree(deps, gate, {
		checkout: options.checkout,
		path,
		documentId: options.documentId,
	});
	return note ? { kind, action: "none", note } : { kind: "workspace", action: "converted" };
}

/**
 * A launch's CHOPIN_WORKTREE, for the supervisor: prepared as above (and said in the log), its
 * branches brought into the checkout now (what an earlier launch left), then every minute while
 * the backend runs; the caller stops the returned sync, with one last sync, once the backend exits.
 */
export async function startPlannerWorkspace(
	context: { git: GitDeps; gate: CheckoutGate; clock: Clock; log: Logger },
	options: { checkout: string; path: string; id: string; sandboxed: boolean },
): Promise<PeriodicSync> {
	const { git: deps, gate, log } = context;
	const { checkout, path, id: document } = options;
	const prepared = await preparePlannerWorkspace(deps, gate, {
		checkout,
		path,
		documentId: document,
		sandboxed: options.sandboxed,
	});
	if (prepared.action === "created")
		log.info({ document, workspace: path }, "made the Planner's workspace, detached at the checkout's HEAD");
	if (prepared.action === "converted")
		log.warn(
			{ document, workspace: path },
			"converted the Planner's linked worktree (made by an earlier chopin) into a workspace with its own git dir; its files and branch are kept, and the branch stays in the checkout too",
		);
	if (prepared.note)
		log.warn(
			{ document, workspace: path },
			`left the Planner's linked worktree as it is (${prepared.note}): the backend cannot commit there in the sandbox`,
		);
	const sync = async () => {
		const result = await syncWorkspace(deps, gate, {
			checkout,
			workspace: path,
			scope: { kind: "planner", id: document },
		});
		if (result.updated.length > 0)
			log.info(
				{ document, refs: result.updated },
				"brought the Planner workspace's branches into the checkout",
			);
	};
	const onError = (error: unknown) =>
		log.warn(
			{ document, reason: (error as Error).message },
			"could not bring the Planner workspace's branches into the checkout",
		);
	await sync().catch(onError);
	return new PeriodicSync({ clock: context.clock, sync, onError }).start();
}

/**
 * Turns a linked worktree of the checkout into a workspace in place. Its HEAD commit is held by the
 * keep ref; a borrowing clone's git dir replaces the `.git` file; HEAD is set to the same branch (a
 * branch of the workspace now) or the same detached commit; the index is rebuilt from HEAD, so the
 * files stay as they were and uncommitted edits show as changes (what was staged is unstaged); then
 * the worktree's registration under the checkout's `.git/worktrees/` goes, so the person can check
 * its branch out again. The branch the old worktree made stays in the checkout's refs/heads: it is
 * the person's now. Returns why it was left alone, if it was.
 */
async function convertLinkedWorktree(
	deps: GitDeps,
	gate: CheckoutGate,
	options: { checkout: string; path: string; documentId: string },
): Promise<string | undefined> {
	const { path } = options;
	const root = await findCheckoutRoot(deps, options.checkout);
	const admin = resolve(
		path,
		readFileSync(join(path, ".git"), "utf8")
			.replace(/^gitdir:/, "")
			.trim(),
	);
	const worktrees = join(realOrSelf(root.commonDir), "worktrees");
	if (dirname(realOrSelf(admin)) !== worktrees)
		return `it is a linked worktree of another repository (${admin})`;
	const head = (
		await guardedGit(deps, path, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])
	).stdout.trim();
	if (!head) return "its HEAD names no commit";
	const symbolic = await guardedGit(deps, path, ["symbolic-ref", "--quiet", "HEAD"]);
	const branch = symbolic.exitCode === 0 ? symbolic.stdout.trim() : undefined;
	await holdBase(deps, gate, root, head, keepRef({ kind: "planner", id: options.documentId }));
	const temp = `${path}.chopin-converting`;
	rmSync(temp, { recursive: true, force: true });
	try {
		await cloneBorrowing(deps, root, temp);
		rmSync(join(path, ".git"));
		renameSync(join(temp, ".git"), join(path, ".git"));
	} finally {
		rmSync(temp, { recursive: true, force: true });
	}
	if (branch) {
		await step(deps, path, path, ["update-ref", branch, head]);
		await step(deps, path, path, ["symbolic-ref", "HEAD", branch]);
	} else {
		await step(deps, path, path, ["update-ref", "--no-deref", "HEAD", head]);
	}
	await step(deps, path, path, ["reset", "--quiet", "--mixed"]);
	await gate.run(root.commonDir, async () => rmSync(admin, { recursive: true, force: true }));
	return undefined;
}

function realOrSelf(path: string): string {
	try {
		return realpathSync(path);
	} catch {
		return resolve(path);
	}
}
