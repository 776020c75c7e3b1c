// The environment a run's ACP agent starts with: the connector's own (so it keeps the person's own agent login),
// the CHOPIN_* facts of the run, the GitHub token for a build, and for an investigation nothing that could push.
import type { RunKind } from "@chopin/agent-link/machine";

export interface RunFacts {
	/** The server's origin. */
	url: string;
	run: string;
	kind: RunKind;
	/** The document's URL. */
	document: string;
	checkout: string;
	workspace: string;
	/** A build's GitHub token (absent for an investigation, and where Chopin gives none). */
	github?: { token: string; expiresAt: number; file: string } | undefined;
}

/** Variables that carry a GitHub credential a tool would push with; an investigation's agent gets none of them. */
export const PUSH_CREDENTIAL_VARIABLES = [
	"GH_TOKEN",
	"GITHUB_TOKEN",
	"GH_ENTERPRISE_TOKEN",
	"GITHUB_ENTERPRISE_TOKEN",
	"GIT_ASKPASS",
	"SSH_ASKPASS",
	"SSH_AUTH_SOCK",
] as const;

/** Every push URL is rewritten to this scheme in an investigation; git has no helper for it, so a push fails at once. */
export const NO_PUSH_SCHEME = "chopin-investigation-no-push";
/** The URL prefixes a push could use. */
const PUSH_PREFIXES = ["https://", "http://", "ssh://", "git://", "git@", "file://", "/", "."];

/**
 * The connector's environment without its own CHOPIN_* variables, then the run's. For an investigation, git is
 * told through GIT_CONFIG_COUNT (the command-line level, above every config file the agent could write) to
 * send every push to a scheme that does not exist and to use no credential helper, and the variables that
 * carry push credentials are left out.
 */
export function runEnvironment(base: Readonly<Record<string, string | undefined>>, facts: RunFacts) {
	const env: Record<string, string> = {};
	for (const [key, value] of Object.entries(base)) {
		if (value !== undefined && !key.toUpperCase().startsWith("CHOPIN_")) env[key] = value;
	}
	Object.assign(env, {
		CHOPIN_URL: facts.url,
		CHOPIN_RUN: facts.run,
		CHOPIN_RUN_KIND: facts.kind,
		CHOPIN_DOCUMENT: facts.document,
		CHOPIN_CHECKOUT: facts.checkout,
		CHOPIN_WORKTREE: facts.workspace,
	});
	if (facts.kind === "build") {
		if (facts.github) {
			env.CHOPIN_GITHUB_TOKEN = facts.github.token;
			env.CHOPIN_GITHUB_TOKEN_EXPIRES_AT = new Date(facts.github.expiresAt).toISOString();
			env.CHOPIN_GITHUB_TOKEN_FILE = facts.github.file;
		}
		return env;
	}
	for (const key of PUSH_CREDENTIAL_VARIABLES) delete env[key];
	env.GIT_TERMINAL_PROMPT = "0";
	const extra: [string, string][] = [
		["credential.helper", ""],
		...PUSH_PREFIXES.map((prefix): [string, string] => [`url.${NO_PUSH_SCHEME}://.pushInsteadOf`, prefix]),
	];
	// Entries the connector itself was given stay, numbered first.
	const already = Number(env.GIT_CONFIG_COUNT ?? "0");
	const start = Number.isInteger(already) && already > 0 ? already : 0;
	extra.forEach(([key, value], i) => {
		env[`GIT_CONFIG_KEY_${start + i}`] = key;
		env[`GIT_CONFIG_VALUE_${start + i}`] = value;
	});
	env.GIT_CONFIG_COUNT = String(start + extra.length);
	return env;
}
