// What chopin needs to know about a checkout (root, origin repository, branch, HEAD), asked of plain git through the injected spawn.
import { statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { execa } from "execa";
import { CliError } from "../program/errors";

export interface GitDeps {
	spawn: typeof execa;
	env: Readonly<Record<string, string | undefined>>;
}

export interface CheckoutRoot {
	/** The working tree's top directory (a linked worktree's own, not its main checkout's). */
	root: string;
	gitDir: string;
	/** The repository's shared git directory: the main checkout's .git for a linked worktree. */
	commonDir: string;
	linkedWorktree: boolean;
}

export interface RemoteRepository {
	/** Lower-case host; an https port is kept, an ssh port is not (it is not the web port). */
	host: string;
	owner: string;
	name: string;
	/** owner/name */
	repository: string;
	/** The URL with any password or token removed: safe to store and print. */
	url: string;
}

export interface CheckoutInfo extends CheckoutRoot {
	remote: RemoteRepository;
	branch: string | undefined;
	head: string | undefined;
}

/** Everything about the checkout that contains `path`. */
export async function describeCheckout(deps: GitDeps, path: string): Promise<CheckoutInfo> {
	const root = await findCheckoutRoot(deps, path);
	const url = await originUrl(deps, root.root);
	const remote = parseRemoteUrl(url);
	if (!remote) {
		throw new CliError(
			"origin-not-recognised",
			`The origin of ${root.root} (${sanitizeUrl(url)}) does not name a repository as host/owner/name.`,
			"Point origin at the repository on its host, for example: git remote set-url origin git@github.com:owner/name.git",
		);
	}
	const [branch, head] = await Promise.all([currentBranch(deps, root.root), headCommit(deps, root.root)]);
	return { ...root, remote, branch, head };
}

/** The checkout root for a path inside it (a file's directory is used for a file). */
export async function findCheckoutRoot(deps: GitDeps, path: string): Promise<CheckoutRoot> {
	let dir: string;
	try {
		dir = statSync(path).isDirectory() ? path : dirname(path);
	} catch {
		throw notACheckout(path, `${path} does not exist.`);
	}
	const result = await git(deps, dir, [
		"rev-parse",
		"--show-toplevel",
		"--absolute-git-dir",
		"--git-common-dir",
	]);
	if (result.exitCode !== 0) throw notACheckout(path, `${path} is not inside a git checkout.`);
	const [root, gitDir, commonDir] = result.stdout.split("\n");
	if (!root || !gitDir || !commonDir) throw notACheckout(path, `${path} is not inside a git checkout.`);
	// --git-common-dir is relative to where git ran when it is not absolute (older git prints ".git").
	const common = resolve(dir, commonDir);
	return { root, gitDir, commonDir: common, linkedWorktree: resolve(gitDir) !== common };
}

/** The raw `origin` URL (it may hold credentials: do not print it, use parseRemoteUrl's url). */
export async function originUrl(deps: GitDeps, root: string): Promise<string> {
	const result = await git(deps, root, ["remote", "get-url", "origin"]);
	if (result.exitCode !== 0 || result.stdout === "") {
		throw new CliError(
			"no-origin",
			`The checkout at ${root} has no origin remote.`,
			`Add one: git -C ${JSON.stringify(root)} remote add origin <url of the repository>`,
		);
	}
	return result.stdout;
}

/** The branch HEAD points at, or undefined when HEAD is detached. */
export async function currentBranch(deps: GitDeps, root: string): Promise<string | undefined> {
	const result = await git(deps, root, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
	return result.exitCode === 0 && result.stdout !== "" ? result.stdout : undefined;
}

/** HEAD's commit, or undefined in a repository with no commits yet. */
export async function headCommit(deps: GitDeps, root: string): Promise<string | undefined> {
	const result = await git(deps, root, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]);
	return result.exitCode === 0 && result.stdout !== "" ? result.stdout : undefined;
}

const SEGMENT = /^[A-Za-z0-9_.-]+$/;
const URL_SCHEMES = new Set(["https:", "http:", "ssh:", "git:", "git+ssh:", "ssh+git:"]);

/**
 * owner/name (and host) from the remote URL forms git accepts for a hosted repository:
 * https://host/owner/name(.git), ssh://[user@]host[:port]/owner/name(.git),
 * git://host/owner/name(.git) and scp-like [user@]host:owner/name(.git). Local paths, file://
 * URLs and paths with more or fewer than two segments are not a repository chopin can name.
 */
export function parseRemoteUrl(raw: string): RemoteRepository | undefined {
	const text = raw.trim();
	let host: string;
	let path: string;
	if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
		let url: URL;
		try {
			url = new URL(text);
		} catch {
			return undefined;
		}
		if (!URL_SCHEMES.has(url.protocol) || url.hostname === "") return undefined;
		host = url.protocol === "https:" || url.protocol === "http:" ? url.host : url.hostname;
		path = decodeURIComponent(url.pathname);
	} else {
		// scp-like: no scheme, a colon before the first slash. A one-letter host is a Windows drive.
		const scp = /^(?:[^@/]+@)?([^:/]{2,}):(.+)$/.exec(text);
		if (!scp) return undefined;
		host = scp[1]!;
		path = scp[2]!;
	}
	host = host.toLowerCase();
	// GitHub's ssh-over-443 endpoint is the same repository as github.com's.
	if (host === "ssh.github.com") host = "github.com";
	const parts = path
		.replace(/^\/+/, "")
		.replace(/\/+$/, "")
		.replace(/\.git$/, "")
		.split("/");
	if (parts.length !== 2) return undefined;
	const [owner, name] = parts as [string, string];
	if (!SEGMENT.test(owner) || !SEGMENT.test(name) || name === "." || name === ".." || owner.startsWith(".")) {
		return undefined;
	}
	return { host, owner, name, repository: `${owner}/${name}`, url: sanitizeUrl(text) };
}

/** A URL without its password or token (`https://x-access-token:ghs_…@github.com/…` keeps only the host and path). */
export function sanitizeUrl(raw: string): string {
	const text = raw.trim();
	if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
		try {
			const url = new URL(text);
			if (url.protocol === "https:" || url.protocol === "http:") {
				url.username = "";
				url.password = "";
			} else {
				url.password = "";
			}
			return url.toString();
		} catch {
			return text.replace(/\/\/[^/@]*@/, "//");
		}
	}
	// scp-like user:password@host:path keeps only the user.
	return text.replace(/^([^@/:]+):[^@/]*@/, "$1@");
}

/**
 * git's environment: the caller's, minus the variables that would point git at another
 * repository than the path asked about (set when chopin runs from a git hook), never
 * prompting for credentials, and with messages in English.
 */
export function gitEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
	const out: Record<string, string> = {};
	for (const [key, value] of Object.entries(env)) {
		if (value === undefined || REPOSITORY_VARIABLES.has(key)) continue;
		out[key] = value;
	}
	out.GIT_TERMINAL_PROMPT = "0";
	out.GIT_OPTIONAL_LOCKS = "0";
	out.LC_ALL = "C";
	return out;
}

const REPOSITORY_VARIABLES = new Set([
	"GIT_DIR",
	"GIT_WORK_TREE",
	"GIT_INDEX_FILE",
	"GIT_COMMON_DIR",
	"GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES",
	"GIT_NAMESPACE",
	"GIT_PREFIX",
]);

/** Runs git with a clean git environment; its stdout and stderr as text. git missing is `git-not-found`; failing is the caller's to judge. */
export async function runGit(
	deps: GitDeps,
	cwd: string,
	args: string[],
): Promise<{ exitCode: number; stdout: string; stderr: string }> {
	const result = await deps.spawn("git", args, {
		cwd,
		env: gitEnv(deps.env),
		extendEnv: false,
		reject: false,
		stdin: "ignore",
	});
	if (result.failed && result.exitCode === undefined) {
		if ((result as { code?: string }).code === "ENOENT") {
			throw new CliError(
				"git-not-found",
				"git could not be started.",
				"Install git and make sure it is on PATH.",
			);
		}
		throw new CliError("git-failed", `git ${args[0]} failed: ${result.shortMessage}`);
	}
	return { exitCode: result.exitCode ?? 1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

async function git(
	deps: GitDeps,
	cwd: string,
	args: string[],
): Promise<{ exitCode: number; stdout: string }> {
	const { exitCode, stdout } = await runGit(deps, cwd, args);
	return { exitCode, stdout: stdout.trim() };
}

function notACheckout(_path: string, message: string): CliError {
	return new CliError(
		"not-a-checkout",
		message,
		"Run the command inside a git checkout, or pass the checkout's path.",
	);
}
