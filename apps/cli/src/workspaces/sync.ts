// Bringing a workspace's work back as commits: the connector, outside any sandbox, fetches the workspace's branches
// into the checkout under refs/remotes/chopin/<id>/ through the gate; the person's branches, HEAD and index stay as they are.
import { lstatSync } from "node:fs";
import { join } from "node:path";
import type { Clock } from "@chopin/agent-link/clock";
import { findCheckoutRoot, type GitDeps } from "../machine/git";
import { CliError } from "../program/errors";
import type { CheckoutGate } from "./gate";
import { firstLine, GUARDED_UPLOAD_PACK, guardedGit } from "./guarded-git";
import { syncNamespace, type WorkspaceScope } from "./refs";

/** How often a running Planner backend's workspace is brought back. */
export const SYNC_INTERVAL_MS = 60_000;

export interface SyncOptions {
	checkout: string;
	workspace: string;
	scope: WorkspaceScope;
}

export interface SyncResult {
	/** False when the folder is no workspace with its own git dir (nothing to bring: a linked worktree's branches are the checkout's already). */
	synced: boolean;
	/** The refs under the namespace that were made or moved. */
	updated: string[];
}

/**
 * `git fetch <workspace> +refs/heads/*:refs/remotes/chopin/<id>/*` in the checkout. Forced, so a
 * rewritten branch is followed (the old commit stays in the ref's reflog); never pruned, so a branch
 * the agent deleted stays the person's to see. No tags, no FETCH_HEAD, no maintenance; the objects
 * are checked (fetch.fsckObjects) before they enter the checkout, and the upload-pack that runs in
 * the workspace runs with the guard's overrides (guarded-git.ts).
 */
export async function syncWorkspace(
	deps: GitDeps,
	gate: CheckoutGate,
	options: SyncOptions,
): Promise<SyncResult> {
	if (!hasOwnGitDir(options.workspace)) return { synced: false, updated: [] };
	const root = await findCheckoutRoot(deps, options.checkout);
	const namespace = syncNamespace(options.scope);
	return gate.run(root.commonDir, async () => {
		const before = await refsUnder(deps, root.root, namespace);
		const fetched = await guardedGit(deps, root.root, [
			"-c",
			"fetch.fsckObjects=true",
			"fetch",
			"--quiet",
			"--no-write-fetch-head",
			"--no-auto-maintenance",
			"--no-tags",
			"--no-recurse-submodules",
			`--upload-pack=${GUARDED_UPLOAD_PACK}`,
			options.workspace,
			`+refs/heads/*:${namespace}/*`,
		]);
		if (fetched.exitCode !== 0) {
			throw new CliError(
				"workspace-sync-failed",
				`Could not bring the branches of ${options.workspace} into ${root.root}: ${firstLine(fetched.stderr)}.`,
				"The work is still in the workspace; chopin tries again at the next sync.",
			);
		}
		const after = await refsUnder(deps, root.root, namespace);
		const updated = [...after].filter(([ref, sha]) => before.get(ref) !== sha).map(([ref]) => ref);
		return { synced: true, updated };
	});
}

/** A workspace of the connector's making: `.git` is a folder (a linked worktree's is a file), not a link. */
export function hasOwnGitDir(workspace: string): boolean {
	try {
		return lstatSync(join(workspace, ".git")).isDirectory();
	} catch {
		return false;
	}
}

async function refsUnder(deps: GitDeps, root: string, namespace: string): Promise<Map<string, string>> {
	const result = await guardedGit(deps, root, [
		"for-each-ref",
		"--format=%(refname) %(objectname)",
		namespace,
	]);
	const refs = new Map<string, string>();
	for (const line of result.stdout.split("\n")) {
		const [ref, sha] = line.trim().split(" ");
		if (ref && sha) refs.set(ref, sha);
	}
	return refs;
}

/**
 * A sync every `intervalMs` on the injected clock while something runs, and one more when it
 * stops. A failed sync is reported and the next one tried on time.
 */
export class PeriodicSync {
	readonly #abort = new AbortController();
	readonly #o: {
		clock: Clock;
		intervalMs: number;
		sync: () => Promise<unknown>;
		onError: (error: unknown) => void;
	};
	#loop: Promise<void> | undefined;
	#stopped: Promise<void> | undefined;

	constructor(options: {
		clock: Clock;
		sync: () => Promise<unknown>;
		onError: (error: unknown) => void;
		intervalMs?: number;
	}) {
		this.#o = { intervalMs: SYNC_INTERVAL_MS, ...options };
	}

	start(): this {
		this.#loop ??= this.#run();
		return this;
	}

	/** Ends the schedule, waits for a sync under way, then syncs once more (once, however often it is called). */
	stop(): Promise<void> {
		this.#stopped ??= (async () => {
			this.#abort.abort();
			await this.#loop;
			await this.#once();
		})();
		return this.#stopped;
	}

	async #run(): Promise<void> {
		const signal = this.#abort.signal;
		while (!signal.aborted) {
			try {
				await this.#o.clock.sleep(this.#o.intervalMs, signal);
			} catch {
				return;
			}
			await this.#once();
		}
	}

	async #once(): Promise<void> {
		try {
			await this.#o.sync();
		} catch (error) {
			this.#o.onError(error);
		}
	}
}
