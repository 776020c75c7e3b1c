// Every environment variable the server reads, validated with zod into one typed Config.
import { isIP } from "node:net";
import { isAbsolute, join, resolve } from "node:path";
import { ATTACHMENTS_TOTAL_BYTES } from "@chopin/agent-link";
import { z } from "zod";
import { normaliseAddress } from "./http/client-address";
import { DEFAULT_LOCAL_ACCOUNTS, localAccountsSchema, loginSchema } from "./local-accounts";
import { Secret } from "./secret";

export type Env = Record<string, string | undefined>;

/** A bad environment variable. `message` is one line naming the variable; main exits 2. */
export class ConfigError extends Error {
	readonly code = "config-invalid";
	constructor(
		readonly variable: string,
		message: string,
		readonly hint?: string,
	) {
		super(message);
		this.name = "ConfigError";
	}
}

export const HARNESSES = ["remote", "atomic", "copilot-sdk", "pi"] as const;
export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;

const MiB = 1024 * 1024;
/** The spec's bound on a turn's files together (Images and files in a turn), the attachment caps' default. */
const SPEC_ATTACHMENT_BYTES = ATTACHMENTS_TOTAL_BYTES;
const HOUR_MS = 3_600_000;

// --- one schema per kind of variable; each names its variable in its one-line message ---

/** Shows a value in an error: quoted, escaped onto one line, and cut when long. */
function shown(raw: string): string {
	const cut = raw.length > 60 ? `${raw.slice(0, 60)}…` : raw;
	return JSON.stringify(cut);
}

type Parse<T> = (raw: string, fail: (message: string) => never) => T;

/**
 * An optional variable: empty or whitespace-only counts as unset, so `PORT=` in a file means the
 * default. A bad value throws ConfigError out of the parse (zod lets it through), so the first
 * bad variable is the one reported.
 */
function variable<T>(name: string, parse: Parse<T>) {
	const fail = (message: string): never => {
		throw new ConfigError(name, message);
	};
	return z
		.string()
		.optional()
		.transform((value): T | undefined => {
			const raw = value?.trim();
			return raw ? parse(raw, fail) : undefined;
		});
}

function integer(name: string, min: number, max: number) {
	return variable(name, (raw, fail) => {
		const n = /^-?\d+$/.test(raw) ? Number(raw) : Number.NaN;
		if (!Number.isSafeInteger(n) || n < min || n > max) {
			fail(`${name} must be an integer from ${min} to ${max} (got ${shown(raw)}).`);
		}
		return n;
	});
}

function oneOf<const T extends readonly string[]>(name: string, values: T) {
	return variable(name, (raw, fail) => {
		if (!values.includes(raw)) fail(`${name} must be one of ${values.join(", ")} (got ${shown(raw)}).`);
		return raw as T[number];
	});
}

const FLAG_VALUES: Record<string, boolean> = {
	on: true,
	true: true,
	"1": true,
	off: false,
	false: false,
	"0": false,
};

function flag(name: string) {
	return variable(name, (raw, fail) => {
		const value = FLAG_VALUES[raw.toLowerCase()];
		if (value === undefined) fail(`${name} must be on or off (got ${shown(raw)}).`);
		return value as boolean;
	});
}

/** An http(s) URL; with `origin`, nothing after the host and port is allowed. Trailing slashes go. */
function httpUrl(name: string, options: { origin?: boolean } = {}) {
	return variable(name, (raw, fail) => {
		let url: URL | undefined;
		try {
			url = new URL(raw);
		} catch {}
		const what = options.origin ? "an http(s) origin such as https://chopin.example" : "an http(s) URL";
		if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || url.username || url.password) {
			fail(`${name} must be ${what} (got ${shown(raw)}).`);
		}
		if (options.origin && (url!.pathname !== "/" || url!.search || url!.hash)) {
			fail(`${name} must be an origin without a path, query or fragment (got ${shown(raw)}).`);
		}
		return options.origin ? url!.origin : url!.href.replace(/\/+$/, "");
	});
}

/** Where the installers served at /install.sh and /install.ps1 download chopin from (see install/). */
export const DEFAULT_CLI_DOWNLOAD_URL = "https://github.com/chopin-app/chopin/releases/download/v{version}";

/**
 * The installers' rule for plain http, on the URL as written (never a parser's normalised host, which turns
 * `127.1` or `0x7f.0.0.1` into 127.0.0.1 where the installers refuse them): the authority is exactly localhost,
 * a dotted-decimal 127.a.b.c or [::1], with no userinfo and at most a port.
 */
const OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
const PLAIN_HTTP = new RegExp(
	`^http://(localhost|127(\\.${OCTET}){3}|\\[::1\\])(:[0-9]{1,5})?([/?#]|$)`,
	"i",
);
function plainHttpAllowed(raw: string): boolean {
	return PLAIN_HTTP.test(raw);
}

/**
 * CLI_DOWNLOAD_URL: an http(s) URL kept as written, since `new URL` would escape its `{version}`.
 * Quotes, `$`, backquotes, backslashes and spaces are refused: the value is pasted into scripts.
 */
const cliDownloadUrl = variable("CLI_DOWNLOAD_URL", (raw, fail) => {
	let url: URL | undefined;
	try {
		url = new URL(raw);
	} catch {}
	if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || url.username || url.password) {
		fail(`CLI_DOWNLOAD_URL must be an http(s) URL, such as ${DEFAULT_CLI_DOWNLOAD_URL} (got ${shown(raw)}).`);
	}
	if (url!.protocol === "http:" && !plainHttpAllowed(raw)) {
		fail(
			`CLI_DOWNLOAD_URL must be https (plain http only on loopback), as the installers refuse anything else.`,
		);
	}
	if (/[\s'"`$\\]/.test(raw) || url!.search || url!.hash) {
		fail(
			`CLI_DOWNLOAD_URL must be a plain URL without quotes, spaces, a query or a fragment (got ${shown(raw)}).`,
		);
	}
	return raw.replace(/\/+$/, "");
});

function text(name: string, max: number) {
	return variable(name, (raw, fail) => {
		if (raw.length > max || /[\r\n]/.test(raw))
			fail(`${name} must be one line of at most ${max} characters.`);
		return raw;
	});
}

/** 32 bytes as 64 hex characters or as base64 (standard or URL-safe, padded or not); undefined otherwise. */
export function parseSecretKey(text: string): Uint8Array | undefined {
	const raw = text.trim();
	if (/^[0-9a-fA-F]{64}$/.test(raw)) return Uint8Array.from(Buffer.from(raw, "hex"));
	if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(raw)) {
		const bytes = Buffer.from(raw.replace(/-/g, "+").replace(/_/g, "/"), "base64");
		if (bytes.length === 32) return Uint8Array.from(bytes);
	}
	return undefined;
}

const secretKey = variable("CHOPIN_SECRET_KEY", (raw, fail) => {
	const key = parseSecretKey(raw);
	if (!key) {
		// Never echo a secret, not even a wrong one: the length is enough to spot a truncated paste.
		fail(
			`CHOPIN_SECRET_KEY must be 32 bytes as 64 hex characters or as base64 (got ${raw.length} characters).`,
		);
	}
	return new Secret(key!);
});

/** The oldest `chopin` CLI a machine may run: an x.y.z version (an optional pre-release tag after -). */
const minCliVersion = variable("MIN_CLI_VERSION", (raw, fail) => {
	if (!/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/.test(raw) || raw.length > 64) {
		fail(`MIN_CLI_VERSION must be a version such as 0.3.0 (got ${shown(raw)}).`);
	}
	return raw;
});

const databaseUrl = variable("DATABASE_URL", (raw, fail) => {
	let url: URL | undefined;
	try {
		url = new URL(raw);
	} catch {}
	if (!url || (url.protocol !== "postgres:" && url.protocol !== "postgresql:") || !url.hostname) {
		// The value may hold a password: name only its scheme.
		const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(raw)?.[1];
		fail(
			`DATABASE_URL must be a postgres:// or postgresql:// URL (got ${scheme ? `a ${scheme}: URL` : "no URL"}).`,
		);
	}
	return new Secret(raw);
});

const host = variable("HOST", (raw, fail) => {
	if (!/^(?:[A-Za-z0-9.-]+|[0-9A-Fa-f:.]+)$/.test(raw)) {
		fail(`HOST must be a host name or IP address to listen on (got ${shown(raw)}).`);
	}
	return raw;
});

const trustedProxyHeader = variable("TRUSTED_PROXY_HEADER", (raw, fail) => {
	if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/.test(raw)) {
		fail(`TRUSTED_PROXY_HEADER must be an HTTP header name such as X-Forwarded-For (got ${shown(raw)}).`);
	}
	return raw.toLowerCase();
});

const trustedProxies = variable("TRUSTED_PROXIES", (raw, fail) => {
	const proxies = new Set<string>();
	for (const entry of raw.split(",").map((e) => e.trim())) {
		if (!entry) continue;
		if (isIP(entry) === 0) {
			fail(`TRUSTED_PROXIES must list IP addresses separated by commas (got ${shown(entry)}).`);
		}
		proxies.add(normaliseAddress(entry));
	}
	return proxies;
});

const admit = variable("ADMIT", (raw, fail) => {
	const logins: string[] = [];
	const organizations: string[] = [];
	for (const entry of raw.split(",").map((e) => e.trim())) {
		if (!entry) continue;
		const org = entry.startsWith("org:") ? entry.slice(4) : undefined;
		const name = org ?? entry;
		if (!loginSchema.safeParse(name).success) {
			fail(`ADMIT must list logins and org:<name> entries separated by commas (got ${shown(entry)}).`);
		}
		// GitHub compares logins and organisation names without case; so does admission.
		(org === undefined ? logins : organizations).push(name.toLowerCase());
	}
	return { logins, organizations };
});

/** LOCAL_ACCOUNTS as JSON; an `@/path` value must have been read by readEnvFiles first. */
const localAccounts = variable("LOCAL_ACCOUNTS", (raw, fail) => {
	if (raw.startsWith("@"))
		fail("LOCAL_ACCOUNTS names a file that was not read: start the server through main.ts.");
	let json: unknown;
	try {
		json = JSON.parse(raw);
	} catch (error) {
		fail(`LOCAL_ACCOUNTS must be JSON or @/path/to/file.json (${(error as Error).message.split("\n")[0]}).`);
	}
	const result = localAccountsSchema.safeParse(json);
	if (!result.success) fail(`LOCAL_ACCOUNTS: ${describeIssue(result.error.issues[0]!)}.`);
	return result.data!;
});

/** `users[0].login: must be a GitHub-style login`, from a zod issue. */
function describeIssue(issue: z.core.$ZodIssue): string {
	// A bad record key wraps the key schema's own issue, which says what was wrong.
	const inner = issue.code === "invalid_key" ? issue.issues[0]?.message : undefined;
	const message = (inner ?? issue.message).replace(/^Invalid input: /, "");
	const text = message.charAt(0).toLowerCase() + message.slice(1);
	return issue.path.length ? `${issuePath(issue.path)}: ${text}` : text;
}

function issuePath(path: readonly PropertyKey[]): string {
	return path
		.map((p, i) =>
			typeof p === "number"
				? `[${p}]`
				: /^[A-Za-z_]\w*$/.test(String(p))
					? `${i ? "." : ""}${String(p)}`
					: `[${JSON.stringify(String(p))}]`,
		)
		.join("");
}

// --- the environment, then the Config built from it ---

const envSchema = z.object({
	PORT: integer("PORT", 0, 65535),
	HOST: host,
	PUBLIC_URL: httpUrl("PUBLIC_URL", { origin: true }),
	DATA_DIR: text("DATA_DIR", 4096),
	DATABASE_URL: databaseUrl,
	AUTH_MODE: oneOf("AUTH_MODE", ["local", "github"] as const),
	LOCAL_ACCOUNTS: localAccounts,
	GITHUB_URL: httpUrl("GITHUB_URL"),
	GITHUB_API_URL: httpUrl("GITHUB_API_URL"),
	GITHUB_CLIENT_ID: text("GITHUB_CLIENT_ID", 200),
	GITHUB_CLIENT_SECRET: variable("GITHUB_CLIENT_SECRET", (raw) => new Secret(raw)),
	ADMIT: admit,
	TRUSTED_PROXY_HEADER: trustedProxyHeader,
	TRUSTED_PROXIES: trustedProxies,
	AGENT: flag("AGENT"),
	HARNESS: oneOf("HARNESS", HARNESSES),
	MODEL: text("MODEL", 200),
	AGENT_CONNECTION_PING_MS: integer("AGENT_CONNECTION_PING_MS", 1, HOUR_MS),
	AGENT_CONNECTION_TIMEOUT_MS: integer("AGENT_CONNECTION_TIMEOUT_MS", 1, HOUR_MS),
	AGENT_CONNECTION_MAX_SILENCE_MS: integer("AGENT_CONNECTION_MAX_SILENCE_MS", 1, HOUR_MS),
	PLANNER_ATTACH_GRACE_MS: integer("PLANNER_ATTACH_GRACE_MS", 0, HOUR_MS),
	HANDOVER_PLANNER_WINDOW_MS: integer("HANDOVER_PLANNER_WINDOW_MS", 0, HOUR_MS),
	PLANNER_CONNECT_WAIT_MS: integer("PLANNER_CONNECT_WAIT_MS", 0, 10 * 60_000),
	CHOPIN_SECRET_KEY: secretKey,
	MAX_STORED_IMAGE_BYTES: integer("MAX_STORED_IMAGE_BYTES", 1024, 1024 * MiB),
	MAX_BODY_BYTES: integer("MAX_BODY_BYTES", 1024, 1024 * MiB),
	CHAT_ATTACHMENT_MAX_BYTES: integer("CHAT_ATTACHMENT_MAX_BYTES", 1, 1024 * MiB),
	CHAT_ATTACHMENT_MAX_TOTAL_BYTES: integer("CHAT_ATTACHMENT_MAX_TOTAL_BYTES", 1, 1024 * MiB),
	LOG_LEVEL: oneOf("LOG_LEVEL", LOG_LEVELS),
	DEMO: flag("DEMO"),
	DEV: flag("DEV"),
	SESSION_TTL_MS: integer("SESSION_TTL_MS", 60_000, 366 * 24 * HOUR_MS),
	MIN_CLI_VERSION: minCliVersion,
	MACHINE_OFFLINE_GRACE_MS: integer("MACHINE_OFFLINE_GRACE_MS", 0, 24 * HOUR_MS),
	MACHINE_HELLOS_IN_FLIGHT: integer("MACHINE_HELLOS_IN_FLIGHT", 0, 100_000),
	LOCAL_PLANNER_CREDENTIALS: flag("LOCAL_PLANNER_CREDENTIALS"),
	CLI_DOWNLOAD_URL: cliDownloadUrl,
});

type ParsedEnv = z.output<typeof envSchema>;

/** The environment schema with defaults and the rules that tie variables together; DATA_DIR resolves against cwd. */
export function configSchema(cwd: string) {
	return envSchema.transform((env) => buildConfig(env, cwd));
}

function buildConfig(env: ParsedEnv, cwd: string) {
	const port = env.PORT ?? 3000;
	const authMode = env.AUTH_MODE ?? "local";
	const dataDir = resolve(cwd, env.DATA_DIR ?? ".data");
	if (authMode === "github") {
		if (!env.GITHUB_CLIENT_ID)
			throw new ConfigError(
				"GITHUB_CLIENT_ID",
				"GITHUB_CLIENT_ID is required when AUTH_MODE=github.",
				"Copy it from your GitHub App's settings page.",
			);
		if (!env.GITHUB_CLIENT_SECRET)
			throw new ConfigError(
				"GITHUB_CLIENT_SECRET",
				"GITHUB_CLIENT_SECRET is required when AUTH_MODE=github.",
				"Generate one on your GitHub App's settings page.",
			);
		if (env.LOCAL_ACCOUNTS)
			throw new ConfigError(
				"LOCAL_ACCOUNTS",
				"LOCAL_ACCOUNTS applies only to AUTH_MODE=local; unset it or set AUTH_MODE=local.",
			);
		if (env.DEMO)
			throw new ConfigError("DEMO", "DEMO=on needs AUTH_MODE=local: the demo account is a local account.");
		if (env.LOCAL_PLANNER_CREDENTIALS)
			throw new ConfigError(
				"LOCAL_PLANNER_CREDENTIALS",
				"LOCAL_PLANNER_CREDENTIALS applies only to AUTH_MODE=local: GitHub mode always issues Planner credentials.",
			);
	}
	const ping = env.AGENT_CONNECTION_PING_MS ?? 15_000;
	const timeout = env.AGENT_CONNECTION_TIMEOUT_MS ?? 120_000;
	const maxSilence = env.AGENT_CONNECTION_MAX_SILENCE_MS ?? 900_000;
	if (timeout <= ping) {
		throw new ConfigError(
			"AGENT_CONNECTION_TIMEOUT_MS",
			`AGENT_CONNECTION_TIMEOUT_MS must be greater than AGENT_CONNECTION_PING_MS (${timeout} <= ${ping}).`,
		);
	}
	if (maxSilence < timeout) {
		throw new ConfigError(
			"AGENT_CONNECTION_MAX_SILENCE_MS",
			`AGENT_CONNECTION_MAX_SILENCE_MS must be at least AGENT_CONNECTION_TIMEOUT_MS (${maxSilence} < ${timeout}).`,
		);
	}
	if ((env.TRUSTED_PROXY_HEADER === undefined) !== (env.TRUSTED_PROXIES === undefined)) {
		const missing = env.TRUSTED_PROXY_HEADER === undefined ? "TRUSTED_PROXY_HEADER" : "TRUSTED_PROXIES";
		throw new ConfigError(
			missing,
			`${missing} is required with ${missing === "TRUSTED_PROXIES" ? "TRUSTED_PROXY_HEADER" : "TRUSTED_PROXIES"}: the header is believed only from the proxies listed.`,
			"Set both (e.g. TRUSTED_PROXY_HEADER=X-Forwarded-For and TRUSTED_PROXIES=10.0.0.2), or neither.",
		);
	}
	const harness = env.HARNESS ?? "remote";
	const chatAttachments = {
		maxBytes: env.CHAT_ATTACHMENT_MAX_BYTES ?? SPEC_ATTACHMENT_BYTES,
		maxTotalBytes: env.CHAT_ATTACHMENT_MAX_TOTAL_BYTES ?? SPEC_ATTACHMENT_BYTES,
	};
	// A remote client is promised at most the spec's 1,048,576 bytes a turn (so a turn fits in one frame).
	for (const [name, value] of [
		["CHAT_ATTACHMENT_MAX_BYTES", chatAttachments.maxBytes],
		["CHAT_ATTACHMENT_MAX_TOTAL_BYTES", chatAttachments.maxTotalBytes],
	] as const) {
		if (harness === "remote" && value > SPEC_ATTACHMENT_BYTES) {
			throw new ConfigError(
				name,
				`${name} may be at most ${SPEC_ATTACHMENT_BYTES} under HARNESS=remote: the agent connection carries no more in a turn.`,
			);
		}
	}
	const database = env.DATABASE_URL
		? ({ kind: "postgres", url: env.DATABASE_URL } as const)
		: ({ kind: "sqlite", path: join(dataDir, "chopin.db") } as const);
	return {
		port,
		host: env.HOST ?? "127.0.0.1",
		/** The origin people use; links and the Origin check use it. Port 0 is replaced by the real port at start. */
		publicUrl: env.PUBLIC_URL ?? `http://localhost:${port}`,
		dataDir,
		database,
		authMode,
		/** Local accounts under AUTH_MODE=local; undefined under github. */
		localAccounts:
			authMode === "local"
				? (env.LOCAL_ACCOUNTS ?? localAccountsSchema.parse(DEFAULT_LOCAL_ACCOUNTS))
				: undefined,
		github: {
			url: env.GITHUB_URL ?? "https://github.com",
			apiUrl: env.GITHUB_API_URL ?? "https://api.github.com",
			clientId: env.GITHUB_CLIENT_ID,
			clientSecret: env.GITHUB_CLIENT_SECRET,
		},
		/** Lower-cased. Both lists empty: everyone is admitted. */
		admit: env.ADMIT ?? { logins: [], organizations: [] },
		/** Behind a reverse proxy: whose header names the client's address (per-address limits). */
		proxyTrust:
			env.TRUSTED_PROXY_HEADER && env.TRUSTED_PROXIES
				? { header: env.TRUSTED_PROXY_HEADER, proxies: env.TRUSTED_PROXIES }
				: undefined,
		agent: env.AGENT ?? true,
		harness,
		model: env.MODEL,
		agentConnection: { pingMs: ping, timeoutMs: timeout, maxSilenceMs: maxSilence },
		plannerAttachGraceMs: env.PLANNER_ATTACH_GRACE_MS ?? 120_000,
		handoverPlannerWindowMs: env.HANDOVER_PLANNER_WINDOW_MS ?? 10_000,
		/** How long an @chopin message waits for a machine that is starting the document's Planner (spec: 30 s). */
		plannerConnectWaitMs: env.PLANNER_CONNECT_WAIT_MS ?? 30_000,
		/** Set from CHOPIN_SECRET_KEY; when undefined, loadSecretKey reads or makes <DATA_DIR>/secret.key. */
		secretKey: env.CHOPIN_SECRET_KEY,
		maxStoredImageBytes: env.MAX_STORED_IMAGE_BYTES ?? 10 * MiB,
		maxBodyBytes: env.MAX_BODY_BYTES ?? 4 * MiB,
		/** CHAT_ATTACHMENT_MAX_BYTES (one file) and CHAT_ATTACHMENT_MAX_TOTAL_BYTES (a message's files together). */
		chatAttachments,
		logLevel: env.LOG_LEVEL ?? "info",
		demo: env.DEMO ?? authMode === "local",
		/** DEV=on: Bun bundles the pages unminified, again on every request (no separate dev server). */
		dev: env.DEV ?? false,
		/** How long a browser sign-in lasts from the moment it is made (30 days by default). */
		sessionTtlMs: env.SESSION_TTL_MS ?? 30 * 24 * HOUR_MS,
		machines: {
			/** MIN_CLI_VERSION; undefined accepts every version. */
			minCliVersion: env.MIN_CLI_VERSION,
			/** How long a dropped machine's runs show "machine offline" before they show failed (15 minutes). */
			offlineGraceMs: env.MACHINE_OFFLINE_GRACE_MS ?? 15 * 60_000,
			hellosInFlight: env.MACHINE_HELLOS_IN_FLIGHT ?? 400,
			/** LOCAL_PLANNER_CREDENTIALS: issue Planner credentials under AUTH_MODE=local too (off, as the spec says). */
			localPlannerCredentials: env.LOCAL_PLANNER_CREDENTIALS ?? false,
		},
		/** The installers' download base; `{version}` stands for the version being installed. */
		cliDownloadUrl: env.CLI_DOWNLOAD_URL ?? DEFAULT_CLI_DOWNLOAD_URL,
	};
}

export type Config = z.output<ReturnType<typeof configSchema>>;
export type Harness = Config["harness"];
export type LogLevel = Config["logLevel"];

/**
 * Reads the server's configuration from environment variables. Pure: no files are read or
 * written (see readEnvFiles and loadSecretKey for those). Throws ConfigError on the first bad value.
 */
export function loadConfig(env: Env, options: { cwd?: string } = {}): Config {
	const cwd = options.cwd ?? process.cwd();
	if (!isAbsolute(cwd)) throw new Error("loadConfig: cwd must be absolute");
	const result = configSchema(cwd).safeParse(env);
	if (!result.success) {
		// Only a value that is not a string gets here (an env object built by hand); name it all the same.
		const issue = result.error.issues[0]!;
		const name = String(issue.path[0]);
		throw new ConfigError(name, `${name} must be a string (${issue.message}).`);
	}
	return result.data;
}
