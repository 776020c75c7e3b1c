// The sandbox a Planner backend (or a run) works in: bubblewrap's argv on Linux, a sandbox-exec profile on macOS.
// Everything readable, nothing writable but the workspace (its own .git inside it) and the --sandbox-write paths; the
// person's checkout and all its git dirs stay read-only whatever --sandbox-write says; the network stays open.

export type SandboxKind = "bwrap" | "sandbox-exec" | "none";

export interface SandboxPaths {
	/** The person's checkout root. */
	checkout: string;
	/** Its git dir and common dir (the same for a regular checkout; a linked worktree of theirs has both). */
	checkoutGitDirs: readonly string[];
	/**
	 * The workspace (CHOPIN_WORKTREE): its own git dir is inside it, so it is the one writable git
	 * repository. It borrows the checkout's objects through an absolute alternates path, which stays
	 * readable at the same path because the checkout is bound read-only where it is.
	 */
	worktree: string;
	/** --sandbox-write paths. */
	writable: readonly string[];
	/** Files the backend must not read at all (the machine credential). */
	hidden: readonly string[];
	/** Folders it must still read (the token files' folder), bound again over anything above them. */
	readable?: readonly string[] | undefined;
	/**
	 * The backend's own writable temporary folder (its TMPDIR). The host's /tmp stays readable and
	 * read-only: a backend or its runtime installed under /tmp (a CI clone, an npx cache) must run.
	 */
	tmp?: string | undefined;
}

/** The argv that runs `command` in the sandbox (the command itself for none). */
export function sandboxedArgv(
	kind: SandboxKind,
	command: readonly string[],
	paths: SandboxPaths,
	tools: { bwrap?: string; sandboxExec?: string } = {},
): string[] {
	switch (kind) {
		case "none":
			return [...command];
		case "bwrap":
			return [tools.bwrap ?? "bwrap", ...bwrapArgs(paths), "--", ...command];
		case "sandbox-exec":
			return [tools.sandboxExec ?? "sandbox-exec", "-p", sandboxExecProfile(paths), ...command];
	}
}

/**
 * bubblewrap's options. Later mounts cover earlier ones, so the order is the policy: the whole
 * file system read-only (the host's /tmp too: it is not hidden, since the backend's own files may
 * live there), a fresh /dev and /proc, the backend's own temporary folder writable (it gets it as
 * TMPDIR), the --sandbox-write paths writable, then the checkout and its git dirs read-only again
 * over any of those (nothing under them is writable), then the workspace writable, then the hidden
 * files masked. --die-with-parent: if the daemon dies without stopping it, the backend does not
 * outlive it; --unshare-pid: its own PID namespace, so stopping it stops every process it started.
 */
export function bwrapArgs(paths: SandboxPaths): string[] {
	const args = [
		"--die-with-parent",
		"--unshare-pid",
		"--ro-bind",
		"/",
		"/",
		"--dev",
		"/dev",
		"--proc",
		"/proc",
	];
	if (paths.tmp) args.push("--bind", paths.tmp, paths.tmp);
	for (const path of paths.readable ?? []) args.push("--ro-bind-try", path, path);
	for (const path of paths.writable) args.push("--bind-try", path, path);
	for (const path of unique([paths.checkout, ...paths.checkoutGitDirs]))
		args.push("--ro-bind-try", path, path);
	args.push("--bind", paths.worktree, paths.worktree);
	for (const path of paths.hidden) args.push("--ro-bind-try", "/dev/null", path);
	return args;
}

/**
 * A sandbox-exec (SBPL) profile. The last matching rule wins, so it reads like the bwrap order:
 * allow by default, deny every write, allow the writable paths, deny the checkout and its git dirs
 * again, allow the workspace, and deny reading the hidden files.
 */
export function sandboxExecProfile(paths: SandboxPaths): string {
	const subpaths = (list: readonly string[]) => list.map((p) => `(subpath ${sbplString(p)})`).join(" ");
	const lines = [
		"(version 1)",
		"(allow default)",
		"(deny file-write*)",
		'(allow file-write* (literal "/dev/null") (literal "/dev/tty") (literal "/dev/dtracehelper"))',
		// Temporary files: macOS has no private /tmp to give, so the shared ones stay writable.
		'(allow file-write* (subpath "/private/tmp") (subpath "/private/var/folders"))',
	];
	if (paths.writable.length > 0) lines.push(`(allow file-write* ${subpaths(paths.writable)})`);
	lines.push(`(deny file-write* ${subpaths(unique([paths.checkout, ...paths.checkoutGitDirs]))})`);
	lines.push(`(allow file-write* ${subpaths([paths.worktree])})`);
	if (paths.hidden.length > 0)
		lines.push(`(deny file-read* ${paths.hidden.map((p) => `(literal ${sbplString(p)})`).join(" ")})`);
	return `${lines.join("\n")}\n`;
}

/** A string literal in SBPL: backslashes and double quotes escaped. */
function sbplString(text: string): string {
	return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

function unique(list: readonly string[]): string[] {
	return [...new Set(list)];
}
