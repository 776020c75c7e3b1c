// Every error the CLI can end with: one table of stable codes and exit codes (mirrored in docs/errors.md).

/** Exit codes, grouped so a script can tell "fix your command" from "pair again" from "upgrade". */
export const EXIT = {
	ok: 0,
	error: 1,
	usage: 2,
	notPaired: 3,
	notConnected: 4,
	checkout: 5,
	machineRevoked: 10,
	repositoryAccessLost: 11,
	clientVersionRefused: 12,
	machineReauthorize: 13,
	held: 14,
	replaced: 15,
	interrupted: 130,
} as const;

interface ErrorEntry {
	readonly exit: number;
	/** One line for docs/errors.md: when the code happens. */
	readonly when: string;
}

/** The one table. docs/errors.md (CLI section) lists the same rows; a test keeps them equal. */
export const CLI_ERRORS = {
	unexpected: {
		exit: EXIT.error,
		when: "Something failed that chopin did not plan for; the log has the details.",
	},
	"not-implemented": {
		exit: EXIT.error,
		when: "The command parsed, but this part of chopin is not built yet.",
	},
	"config-invalid": {
		exit: EXIT.error,
		when: "machine.json exists but is not valid JSON or does not match its schema.",
	},
	"credential-invalid": {
		exit: EXIT.error,
		when: "credential.json exists but is not valid JSON or does not match its schema.",
	},
	"git-not-found": { exit: EXIT.error, when: "The git executable could not be started." },
	"git-failed": { exit: EXIT.error, when: "git ran but failed in a way chopin could not explain." },
	"daemon-protocol-error": {
		exit: EXIT.error,
		when: "The daemon's control socket answered something that is not the protocol.",
	},
	"daemon-request-invalid": { exit: EXIT.error, when: "The daemon refused a control request as malformed." },
	"daemon-request-failed": { exit: EXIT.error, when: "The daemon could not carry out a control request." },
	"daemon-stop-timeout": {
		exit: EXIT.error,
		when: "The daemon was asked to stop (`chopin stop`) but its process still ran 30 s later.",
	},
	"server-unreachable": {
		exit: EXIT.error,
		when: "The server could not be reached, timed out, or failed (HTTP 5xx); nothing was changed.",
	},
	"server-refused": {
		exit: EXIT.error,
		when: "The server refused a request; the message is the server's own, with its hint.",
	},
	"pairing-expired": {
		exit: EXIT.error,
		when: "Nobody confirmed the pairing within 5 minutes; nothing was stored. Run `chopin connect` again.",
	},
	"pairing-refused": {
		exit: EXIT.error,
		when: "The server refused to hand out the pairing's credential (already claimed, unknown, wrong secret).",
	},
	"paired-elsewhere": {
		exit: EXIT.error,
		when: "`chopin connect --server` names another server than the one this machine is paired with.",
	},
	usage: {
		exit: EXIT.usage,
		when: "The command line does not parse: unknown option, missing value, extra argument.",
	},
	"option-invalid": { exit: EXIT.usage, when: "An option's value has the wrong form." },
	"acp-command-empty": { exit: EXIT.usage, when: "`--` was given with no ACP command after it." },
	"acp-command-unmatched-quote": {
		exit: EXIT.usage,
		when: "The ACP command, given after `--` as one quoted string, has a quote that is never closed.",
	},
	"acp-command-operator": {
		exit: EXIT.usage,
		when: "The ACP command, given after `--` as one quoted string, has an unquoted shell operator.",
	},
	"acp-command-invalid": { exit: EXIT.usage, when: "The ACP command contains a NUL character." },
	"bridge-env-missing": {
		exit: EXIT.usage,
		when: "`chopin bridge` was started without CHOPIN_URL and CHOPIN_RUN_TOKEN (a run's agent starts it with both).",
	},
	"env-invalid": {
		exit: EXIT.usage,
		when: "An --env value (or an --env-file line) is not KEY=VALUE with a valid variable name.",
	},
	"env-reserved": {
		exit: EXIT.usage,
		when: "An --env (or --env-file) key starts with CHOPIN_, which the connector sets itself.",
	},
	"env-file-unreadable": {
		exit: EXIT.usage,
		when: "An --env-file cannot be read (missing, a directory, or no permission).",
	},
	"sandbox-options-conflict": {
		exit: EXIT.usage,
		when: "--sandbox-write was given together with --no-sandbox.",
	},
	"planner-command-unmatched-quote": {
		exit: EXIT.usage,
		when: "--planner-command has a quote that is never closed.",
	},
	"planner-command-operator": {
		exit: EXIT.usage,
		when: "--planner-command has an unquoted shell operator: a pipe, &, ;, <, > or a parenthesis.",
	},
	"planner-command-empty": {
		exit: EXIT.usage,
		when: "--planner-command (or CHOPIN_PLANNER_COMMAND) has no words, or an empty word.",
	},
	"planner-command-invalid": {
		exit: EXIT.usage,
		when: "CHOPIN_PLANNER_COMMAND is not a JSON array of non-empty strings.",
	},
	"server-url-invalid": {
		exit: EXIT.usage,
		when: "--server is not an http(s) origin (no path, query, fragment or credentials).",
	},
	"server-url-insecure": { exit: EXIT.usage, when: "--server uses http:// for a host that is not loopback." },
	"server-missing": {
		exit: EXIT.usage,
		when: "`chopin connect` on a machine that was never paired needs --server.",
	},
	"planner-command-missing": {
		exit: EXIT.usage,
		when: "--planner, --agent, --env or --sandbox-write was given, but no Planner backend command is known.",
	},
	"not-paired": {
		exit: EXIT.notPaired,
		when: "No machine credential is stored: run `chopin connect` first.",
	},
	"not-connected": {
		exit: EXIT.notConnected,
		when: "`chopin status`: paired, but no daemon runs, or it runs and is not connected.",
	},
	"daemon-not-running": { exit: EXIT.notConnected, when: "No daemon answers on the control socket." },
	"daemon-not-responding": {
		exit: EXIT.notConnected,
		when: "The daemon accepted the connection but did not answer in time.",
	},
	"not-a-checkout": { exit: EXIT.checkout, when: "The path is missing or is not inside a git checkout." },
	"no-origin": { exit: EXIT.checkout, when: "The checkout has no `origin` remote." },
	"origin-not-recognised": {
		exit: EXIT.checkout,
		when: "The origin URL does not name a repository as host/owner/name.",
	},
	"machine-revoked": {
		exit: EXIT.machineRevoked,
		when: "The server no longer knows this machine's credential: pair again.",
	},
	"repository-access-lost": {
		exit: EXIT.repositoryAccessLost,
		when: "The machine's owner lost access to a checkout's repository.",
	},
	"client-version-refused": {
		exit: EXIT.clientVersionRefused,
		when: "The server needs a newer chopin; the message names the upgrade command.",
	},
	"machine-reauthorize": {
		exit: EXIT.machineReauthorize,
		when: "The machine's GitHub authorization must be renewed by pairing again.",
	},
	"checkout-locked": {
		exit: EXIT.held,
		when: "Another live chopin process holds the checkout's lock; the message names its pid.",
	},
	"daemon-already-running": {
		exit: EXIT.held,
		when: "`chopin run` found a live daemon already answering on the control socket.",
	},
	"machine-replaced": {
		exit: EXIT.replaced,
		when: "Another chopin process connected with this machine's credential and took over (close 4409).",
	},
	"planner-clone-failed": {
		exit: EXIT.error,
		when: "A Planner backend's repository could not be cloned into <state>/repos (the backend is retried on its backoff).",
	},
	"workspace-create-failed": {
		exit: EXIT.error,
		when: "The connector could not make a workspace (its own git dir) for a run or a sandboxed Planner backend; a backend is retried on its backoff.",
	},
	"workspace-base-missing": {
		exit: EXIT.error,
		when: "A workspace's base commit is neither in the checkout nor given by the checkout's origin (or the checkout has no commit).",
	},
	"workspace-sync-failed": {
		exit: EXIT.error,
		when: "The connector could not bring a workspace's branches into the checkout under refs/remotes/chopin/; it tries again at the next sync.",
	},
	"run-record-invalid": {
		exit: EXIT.error,
		when: "A run's <state>/runs/<run id>/run.json is not valid JSON or does not match its schema.",
	},
	"service-manager-unavailable": {
		exit: EXIT.error,
		when: "`chopin service install` found no user service manager to install into: no systemd as init (a container, WSL without systemd), no reachable `systemctl --user`, or no launchd login session.",
	},
	"service-linger-needs-admin": {
		exit: EXIT.error,
		when: "Turning on systemd's linger (the service runs at boot and after logout) needs an administrator here; the message names the one `sudo` command and nothing was installed.",
	},
	"service-command-unresolved": {
		exit: EXIT.error,
		when: "The ACP agent, the Planner backend or git would not resolve under the service's PATH (not found, or only in a per-shell or temporary directory); nothing was installed.",
	},
	"service-path-unsupported": {
		exit: EXIT.error,
		when: "A path the service definition must hold has a control character (or, for Task Scheduler, a `%`); nothing was installed.",
	},
	"service-failed": {
		exit: EXIT.error,
		when: "A service manager command (systemctl, launchctl, schtasks) failed; the message names it and what it said.",
	},
	interrupted: { exit: EXIT.interrupted, when: "Interrupted (Ctrl-C / SIGINT or SIGTERM)." },
} as const satisfies Record<string, ErrorEntry>;

export type CliErrorCode = keyof typeof CLI_ERRORS;

export function isCliErrorCode(code: string): code is CliErrorCode {
	return Object.hasOwn(CLI_ERRORS, code);
}

/**
 * An error the user can act on: a stable code, one sentence, and an optional hint naming the
 * next step. The exit code comes from the table, so only `main` (via exitCodeOf) turns it into
 * a process exit code and no command picks numbers of its own.
 */
export class CliError extends Error {
	override readonly name = "CliError";
	readonly code: CliErrorCode;
	readonly hint: string | undefined;
	/** The server's own code and HTTP status, when this is a server's refusal (a caller may tell them apart). */
	serverCode: string | undefined;
	status: number | undefined;
	/** How long the server asked us to wait before trying again (its Retry-After), when it said. */
	retryAfterMs: number | undefined;

	constructor(code: CliErrorCode, message: string, hint?: string, options?: { cause?: unknown }) {
		super(message, options);
		this.code = code;
		this.hint = hint;
	}

	get exitCode(): number {
		return CLI_ERRORS[this.code].exit;
	}
}

/** The exit code for anything thrown: a CliError's from the table, 1 for the rest. */
export function exitCodeOf(error: unknown): number {
	return error instanceof CliError ? error.exitCode : EXIT.error;
}

/** Wraps anything thrown into a CliError, keeping a CliError as it is. */
export function toCliError(error: unknown): CliError {
	if (error instanceof CliError) return error;
	const message = error instanceof Error ? error.message : String(error);
	return new CliError("unexpected", sentence(message), undefined, { cause: error });
}

/** Ends a message with a full stop so every error reads as one sentence. */
export function sentence(text: string): string {
	const trimmed = text.trim();
	if (trimmed === "") return "Unknown error.";
	const first = trimmed[0]!.toUpperCase() + trimmed.slice(1);
	return /[.!?]$/.test(first) ? first : `${first}.`;
}
