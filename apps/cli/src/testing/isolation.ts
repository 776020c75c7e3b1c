// The isolation probe's expectations, shared by the tests that run it in a sandbox: as a Planner backend, as a run's
// workspace, and as a run's real agent. Every write under the person's checkout is refused; git in the workspace works.

import { expect } from "bun:test";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { git } from "./git";

export const PROBE = join(import.meta.dir, "fixtures", "isolation-probe.sh");
export const HAS_BWRAP = Boolean(Bun.which("bwrap"));
export const GIT_IDENTITY = {
	GIT_AUTHOR_NAME: "Agent",
	GIT_AUTHOR_EMAIL: "agent@example.com",
	GIT_COMMITTER_NAME: "Agent",
	GIT_COMMITTER_EMAIL: "agent@example.com",
};

/** Every write the probe tries, in its order; each must be refused (outside a sandbox each one succeeds). */
export const REFUSED = [
	"a new object",
	"an object file",
	"update-ref refs/heads/main",
	"update-ref through GIT_DIR",
	"a new branch",
	"worktree add",
	"the worktrees folder",
	"git push into the checkout",
	"a reflog",
	"HEAD",
	"symbolic-ref HEAD",
	"the index",
	"the index file",
	"config",
	"hooks",
	"packed-refs",
	"the packed-refs file",
	"a file of the checkout",
].map((what) => `refused ${what}`);
export const WORKED = ["workspace checkout -b", "workspace commit", "workspace branch"];

/** The checkout's second commit, so that `update-ref refs/heads/main <first>` would be a real move. */
export async function secondCommit(checkout: string): Promise<string> {
	const first = await git(checkout, "rev-parse", "HEAD");
	writeFileSync(join(checkout, "SECOND.md"), "second\n");
	await git(checkout, "add", "SECOND.md");
	await git(checkout, "commit", "--quiet", "-m", "second");
	// A local edit of the person's, which must stay.
	writeFileSync(join(checkout, "SECOND.md"), "edited, not committed\n");
	return first;
}

/** Every file under a folder with the digest of its content and its mode. */
export function snapshot(root: string): Record<string, string> {
	const out: Record<string, string> = {};
	const walk = (dir: string) => {
		for (const entry of readdirSync(dir, { withFileTypes: true })) {
			const path = join(dir, entry.name);
			if (entry.isDirectory()) walk(path);
			else {
				const digest = createHash("sha256").update(readFileSync(path)).digest("hex");
				out[relative(root, path)] = `${digest} ${statSync(path).mode.toString(8)}`;
			}
		}
	};
	walk(root);
	return out;
}

export function expectProbe(lines: string[]): void {
	expect(lines.filter((line) => line.startsWith("WROTE"))).toEqual([]);
	expect(lines.filter((line) => line.startsWith("refused"))).toEqual(REFUSED);
	for (const step of WORKED) expect(lines).toContain(step);
	expect(lines.at(-1)).toBe("probe done");
}
