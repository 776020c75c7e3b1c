// git as the connector runs it on workspaces and checkouts: nothing an agent configured in a workspace may execute,
// no hook or maintenance of the person's runs for the connector's own refs, and git's locks are waited for.
import { type GitDeps, runGit } from "../machine/git";

/**
 * `-c` overrides on every git the connector runs here. A workspace's `.git` (config, hooks, info) is
 * the agent's to write, so each setting that makes git start a program is neutralised where the
 * command could meet it:
 * - `core.hooksPath=/dev/null`: no hook runs (post-checkout, reference-transaction, pre-auto-gc...).
 * - `core.fsmonitor=false`: no fsmonitor program is started for an index.
 * - `protocol.ext.allow=never`: no `ext::` URL (a command line) is ever followed, whatever a config allows.
 * - `gc.auto=0`, `maintenance.auto=false`: no gc or maintenance in the background of the person's repository.
 * - `core.filesRefLockTimeout`, `core.packedRefsTimeout`: a ref lock the person's own git (or another chopin
 *   process) holds is waited for, up to 10 s, instead of failing at once.
 * `uploadpack.packObjectsHook` and `core.alternateRefsCommand` need no override: git reads the first only
 * from the system, global and command-line config, and the second only in the repository that fetches
 * (the checkout, never a workspace). Filters, diff drivers and textconv are not covered: the connector
 * runs nothing that reads a workspace's files (status, diff, checkout) once an agent has had it; after
 * creation it only fetches from it (upload-pack) and removes it.
 */
export const GUARD_CONFIG: readonly string[] = [
	"core.hooksPath=/dev/null",
	"core.fsmonitor=false",
	"protocol.ext.allow=never",
	"gc.auto=0",
	"maintenance.auto=false",
	"core.filesRefLockTimeout=10000",
	"core.packedRefsTimeout=10000",
];

/**
 * The upload-pack a fetch from a workspace starts inside that workspace. A local fetch clears the
 * `-c` settings before it starts upload-pack, so they are given again on its own command line (which
 * git runs through the shell, the workspace's path appended).
 */
export const GUARDED_UPLOAD_PACK = `git -c core.hooksPath=/dev/null -c core.fsmonitor=false upload-pack`;

/** git with the overrides above; its stdout and stderr as text, its failure the caller's to judge. */
export function guardedGit(
	deps: GitDeps,
	cwd: string,
	args: readonly string[],
): Promise<{ exitCode: number; stdout: string; stderr: string }> {
	return runGit(deps, cwd, [...GUARD_CONFIG.flatMap((setting) => ["-c", setting]), ...args]);
}

/** git's first line of complaint, for an error message. */
export function firstLine(text: string): string {
	return text.trim().split("\n")[0]?.replace(/\.$/, "") || "git gave no reason";
}
