// Making a workspace: a clone of the checkout with its own git directory that borrows the checkout's objects
// (clone --shared, nothing copied), at the exact commit; of the checkout only the connector's keep ref is written.
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { type CheckoutRoot, findCheckoutRoot, type GitDeps, runGit, sanitizeUrl } from "../machine/git";
import { CliError } from "../program/errors";
import type { CheckoutGate } from "./gate";
import { firstLine, guardedGit } from "./guarded-git";
import { keepRef, type WorkspaceScope } from "./refs";

/** A full commit id (SHA-1 or SHA-256), as a run's base is given. */
const COMMIT = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

export interface CreateWorkspaceOptions {
	/** The person's checkout (or the connector's clone under <state>/repos): any path inside it. */
	checkout: string;
	/** Where the workspace goes: missing or an empty folder. */
	path: string;
	/** A full commit id, or `HEAD` for the checkout's HEAD commit (a Planner's workspace). */
	base: string;
	/** A new branch to start on (a run's); without one HEAD is detached at the base (a Planner's). */
	branch?: string | undefined;
	scope: WorkspaceScope;
}

export interface Workspace {
	path: string;
	/** The checkout's root. */
	checkout: string;
	/** The checkout's common git dir: the workspace's alternates point at its `objects`. */
	commonDir: string;
	/** The commit checked out. */
	base: string;
	branch?: string | undefined;
	/** The ref in the checkout that holds `base` for as long as the workspace lives. */
	keepRef: string;
}

/**
 * Makes the workspace. In order: the base commit is held in the checkout by the keep ref (fetched
 * from the checkout's origin into it when the checkout lacks the commit), then `git clone --shared
 * --no-checkout` of the checkout's git dir, its refs dropped (they name the person's branches and
 * tags, which the person may delete; only the workspace's own may stay), the base checked out on
 * the new branch or detached, and `origin` set to the checkout's own origin URL without credentials
 * (none when the checkout has none). The checkout's files, index, HEAD and branches are only read.
 */
export async function createWorkspace(
	deps: GitDeps,
	gate: CheckoutGate,
	options: CreateWorkspaceOptions,
): Promise<Workspace> {
	const { path, branch } = options;
	if (!isEmptyOrMissing(path)) {
		throw new CliError(
			"workspace-create-failed",
			`Could not make a workspace at ${path}: the folder already holds something.`,
			"Move that folder away, or choose another run.",
		);
	}
	if (options.base !== "HEAD" && !COMMIT.test(options.base)) {
		throw new CliError(
			"workspace-create-failed",
			`Could not make a workspace at ${path}: ${JSON.stringify(options.base)} is not a full commit id.`,
		);
	}
	const root = await findCheckoutRoot(deps, options.checkout);
	const keep = keepRef(options.scope);
	const base = await holdBase(deps, gate, root, options.base, keep);
	mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
	const existed = existsSync(path);
	try {
		await cloneBorrowing(deps, root, path);
		await step(
			deps,
			path,
			path,
			branch
				? ["checkout", "--quiet", "--no-track", "-b", branch, base]
				: ["checkout", "--quiet", "--detach", base],
		);
	} catch (error) {
		rmSync(path, { recursive: true, force: true });
		if (existed) mkdirSync(path);
		throw error;
	}
	return { path, checkout: root.root, commonDir: root.commonDir, base, branch, keepRef: keep };
}

/**
 * `git clone --shared --no-checkout` of the checkout's git dir into `path`, with no refs at all
 * (the clone's name the person's branches and tags, which the person may delete, and a workspace
 * must not depend on them) and `origin` set to the checkout's own origin URL without credentials
 * (a workspace's config is not a 0600 file), or no origin when the checkout has none. HEAD is
 * left unborn for the caller to set.
 */
export async function cloneBorrowing(deps: GitDeps, root: CheckoutRoot, path: string): Promise<void> {
	await step(deps, dirname(path), path, [
		"clone",
		"--quiet",
		"--shared",
		"--no-checkout",
		"--no-tags",
		root.commonDir,
		path,
	]);
	// Drops refs/remotes/origin/* and the remote's settings; the local branch the clone made goes next.
	await step(deps, path, path, ["remote", "remove", "origin"]);
	const listed = await step(deps, path, path, ["for-each-ref", "--format=%(refname)"]);
	for (const ref of listed.stdout.split("\n").map((line) => line.trim())) {
		if (ref !== "") await step(deps, path, path, ["update-ref", "--no-deref", "-d", ref]);
	}
	const origin = await checkoutOrigin(deps, root.root);
	if (origin) await step(deps, path, path, ["remote", "add", "origin", origin]);
}

/**
 * The base commit (a full id, or HEAD), held by the keep ref through the gate. A commit the checkout lacks is fetched
 * from its origin straight into the keep ref (no FETCH_HEAD, no maintenance), so the checkout then
 * has it and its history, and the workspace borrows them like any other.
 */
export async function holdBase(
	deps: GitDeps,
	gate: CheckoutGate,
	root: CheckoutRoot,
	base: string,
	keep: string,
): Promise<string> {
	return gate.run(root.commonDir, async () => {
		const present = await commitOf(deps, root.root, base);
		if (present) {
			const held = await guardedGit(deps, root.root, ["update-ref", keep, present]);
			if (held.exitCode !== 0) {
				throw new CliError(
					"workspace-create-failed",
					`Could not write ${keep} in ${root.root}: ${firstLine(held.stderr)}.`,
					"Check that the checkout's .git is writable by this user.",
				);
			}
			return present;
		}
		if (base === "HEAD") {
			throw new CliError(
				"workspace-base-missing",
				`The checkout at ${root.root} has no commit to start a workspace from.`,
				"Make a first commit in the checkout.",
			);
		}
		const fetched = await guardedGit(deps, root.root, [
			"fetch",
			"--quiet",
			"--no-write-fetch-head",
			"--no-auto-maintenance",
			"--no-tags",
			"--no-recurse-submodules",
			"origin",
			`+${base}:${keep}`,
		]);
		const got = await commitOf(deps, root.root, base);
		if (!got) {
			throw new CliError(
				"workspace-base-missing",
				`Commit ${base} is not in ${root.root}, and its origin did not give it: ${firstLine(fetched.stderr)}.`,
				`Fetch it into the checkout (git -C ${JSON.stringify(root.root)} fetch origin), or check that this machine can reach the repository.`,
			);
		}
		return got;
	});
}

/** The commit a name resolves to in the checkout, or undefined when the checkout lacks it. */
async function commitOf(deps: GitDeps, cwd: string, name: string): Promise<string | undefined> {
	const result = await runGit(deps, cwd, ["rev-parse", "--verify", "--quiet", `${name}^{commit}`]);
	const sha = result.stdout.trim();
	return result.exitCode === 0 && sha !== "" ? sha : undefined;
}

/** The checkout's origin URL without any password or token (a workspace's config is not a 0600 file), if it has one. */
async function checkoutOrigin(deps: GitDeps, root: string): Promise<string | undefined> {
	const result = await runGit(deps, root, ["remote", "get-url", "origin"]);
	const url = result.stdout.trim();
	return result.exitCode === 0 && url !== "" ? sanitizeUrl(url) : undefined;
}

/** One git command of making a workspace; its failure is `workspace-create-failed`, naming the command. */
export async function step(
	deps: GitDeps,
	cwd: string,
	path: string,
	args: string[],
): Promise<{ stdout: string; stderr: string }> {
	const result = await guardedGit(deps, cwd, args);
	if (result.exitCode !== 0) {
		throw new CliError(
			"workspace-create-failed",
			`Could not make a workspace at ${path}: git ${args[0]} failed: ${firstLine(result.stderr)}.`,
			"Check that the checkout is a working git repository and that the state dir has room.",
		);
	}
	return result;
}

function isEmptyOrMissing(dir: string): boolean {
	try {
		return readdirSync(dir).length === 0;
	} catch {
		return !existsSync(dir);
	}
}
