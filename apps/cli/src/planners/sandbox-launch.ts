// A command launched in the machine's sandbox with one workspace writable: the checkout's git dirs looked up (they
// stay read-only), its own temporary folder made (bubblewrap's /tmp is read-only), and the argv built. Planner
// backends and runs launch the same way.
import { mkdirSync } from "node:fs";
import { type SandboxKind, sandboxedArgv } from "./sandbox";
import { checkoutGitDirs, type WorkspaceDeps } from "./workspace";

export interface SandboxLaunch {
	kind: SandboxKind;
	command: readonly string[];
	/** The person's checkout (or the connector's clone): read-only, its git dirs too. */
	checkout: string;
	/** The one writable folder (CHOPIN_WORKTREE). */
	workspace: string;
	/** Where its temporary folder goes under bubblewrap (handed to it as TMPDIR). */
	tmpDir: string;
	/** --sandbox-write paths. */
	writable: readonly string[];
	/** Files it must not read (the machine credential). */
	hidden: readonly string[];
	/** Folders it must read (its token files'). */
	readable: readonly string[];
}

/** The argv to run, and the TMPDIR to give it (under bubblewrap only). */
export async function sandboxLaunch(
	git: WorkspaceDeps,
	launch: SandboxLaunch,
): Promise<{ argv: string[]; tmp: string | undefined }> {
	const tmp = launch.kind === "bwrap" ? launch.tmpDir : undefined;
	if (tmp) mkdirSync(tmp, { recursive: true, mode: 0o700 });
	const gitDirs = launch.kind === "none" ? [] : await checkoutGitDirs(git, launch.checkout);
	const argv = sandboxedArgv(launch.kind, launch.command, {
		checkout: launch.checkout,
		checkoutGitDirs: gitDirs,
		worktree: launch.workspace,
		writable: launch.writable,
		hidden: launch.hidden,
		readable: launch.readable,
		...(tmp && { tmp }),
	});
	return { argv, tmp };
}
