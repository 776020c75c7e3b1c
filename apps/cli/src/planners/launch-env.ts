// The environment a Planner backend is launched with: the connector's own, the --env values, then the CHOPIN_* table of agent-connection.md.

export interface LaunchFacts {
	/** The server's origin. */
	url: string;
	/** The document as given to --planner, or its URL when Chopin chose this machine. */
	document: string;
	token: string;
	tokenFile: string;
	checkout: string;
	worktree: string;
	/** Absent when Chopin gives no GitHub token (local mode): the three variables are then absent too. */
	github?: { token: string; expiresAt: number; file: string } | undefined;
}

/**
 * The connector's environment first, the --env values over it, and the CHOPIN_* variables last
 * (--env may not name CHOPIN_ keys, and a stale CHOPIN_* in the connector's own environment must
 * not leak through: every CHOPIN_ variable the connector inherited is dropped).
 */
export function launchEnvironment(
	base: Readonly<Record<string, string | undefined>>,
	extra: Readonly<Record<string, string>>,
	facts: LaunchFacts,
): Record<string, string> {
	const env: Record<string, string> = {};
	for (const [key, value] of Object.entries(base)) {
		if (value !== undefined && !key.toUpperCase().startsWith("CHOPIN_")) env[key] = value;
	}
	Object.assign(env, extra);
	env.CHOPIN_URL = facts.url;
	env.CHOPIN_DOCUMENT = facts.document;
	env.CHOPIN_PLANNER_TOKEN = facts.token;
	env.CHOPIN_PLANNER_TOKEN_FILE = facts.tokenFile;
	env.CHOPIN_CHECKOUT = facts.checkout;
	env.CHOPIN_WORKTREE = facts.worktree;
	if (facts.github) {
		env.CHOPIN_GITHUB_TOKEN = facts.github.token;
		env.CHOPIN_GITHUB_TOKEN_EXPIRES_AT = new Date(facts.github.expiresAt).toISOString();
		env.CHOPIN_GITHUB_TOKEN_FILE = facts.github.file;
	}
	return env;
}
