// Where chopin keeps its state (credential, locks, socket, logs) and its config, per platform.
import { joinPath, resolvePath } from "./plain-path";

export type Platform = "linux" | "darwin" | "win32";

export interface CliPaths {
	/** Credential, locks, the control socket and logs. Created at 0700. */
	readonly stateDir: string;
	/** machine.json. Created at 0700. */
	readonly configDir: string;
	readonly logDir: string;
	readonly logFile: string;
	/** The daemon's lock (one daemon per state dir). */
	readonly locksDir: string;
	/**
	 * Checkout locks: per user, shared by every state dir (the platform's cache dir, never the checkout's .git), so
	 * two daemons with different state dirs can never serve one checkout.
	 */
	readonly checkoutLocksDir: string;
	readonly credentialFile: string;
	readonly machineConfigFile: string;
	/** Digests of the files a full check accepted (checked-files.ts). */
	readonly checkedFile: string;
	/** How the last daemon ended (daemon-exit.ts). */
	readonly daemonExitFile: string;
	/** A file whose appearance asks the daemon to stop (for a service manager that can only kill it). */
	readonly stopRequestFile: string;
	/** A Unix socket path, or a Windows named pipe name. */
	readonly socket: string;
}

export interface PlatformDirs {
	readonly data: string;
	readonly config: string;
	readonly cache: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * env-paths' data, config and cache directories for `chopin` (no `-nodejs` suffix), by its own rules: XDG_DATA_HOME,
 * XDG_CONFIG_HOME and XDG_CACHE_HOME (else ~/.local/share, ~/.config, ~/.cache) on Linux, ~/Library/Application
 * Support, ~/Library/Preferences and ~/Library/Caches on macOS, %LOCALAPPDATA%\chopin\Data, %APPDATA%\chopin\Config
 * and %LOCALAPPDATA%\chopin\Cache on Windows. Written out rather than imported:
 * env-paths loads node:os, node:path and node:process, 1.5 ms of every start (docs/install.md § Start-up time), and
 * answers only for the host. paths.test.ts checks these against env-paths on this host.
 */
export function platformDirs(platform: Platform, env: Env, home: string): PlatformDirs {
	const join = (dir: string, ...names: string[]) => joinPath(platform, dir, ...names);
	if (platform === "darwin") {
		return {
			data: join(home, "Library", "Application Support", "chopin"),
			config: join(home, "Library", "Preferences", "chopin"),
			cache: join(home, "Library", "Caches", "chopin"),
		};
	}
	if (platform === "win32") {
		return {
			data: join(env.LOCALAPPDATA || join(home, "AppData", "Local"), "chopin", "Data"),
			config: join(env.APPDATA || join(home, "AppData", "Roaming"), "chopin", "Config"),
			cache: join(env.LOCALAPPDATA || join(home, "AppData", "Local"), "chopin", "Cache"),
		};
	}
	return {
		data: join(env.XDG_DATA_HOME || join(home, ".local", "share"), "chopin"),
		config: join(env.XDG_CONFIG_HOME || join(home, ".config"), "chopin"),
		cache: join(env.XDG_CACHE_HOME || join(home, ".cache"), "chopin"),
	};
}

/** os.homedir(), which reads HOME (USERPROFILE on Windows) first: node:os is loaded only when that is unset. */
export function homeDir(platform: Platform, env: Env): string {
	const fromEnv = platform === "win32" ? env.USERPROFILE : env.HOME;
	return fromEnv || (require("node:os") as typeof import("node:os")).homedir();
}

/**
 * The home and paths a chopin process started in `env` and `cwd` finds: the daemon's and every command's
 * (process-context.ts), and what a plain status tells the daemon it looks at (status-by-daemon.ts).
 */
export function pathsFromEnvironment(
	platform: Platform,
	env: Env,
	cwd: string,
): { home: string; paths: CliPaths } {
	const home = homeDir(platform, env);
	return { home, paths: resolvePaths({ env, platform, cwd, defaults: platformDirs(platform, env, home) }) };
}

/**
 * The paths for one platform. `defaults` comes from platformDirs; the platform is a parameter so
 * Windows' named pipe and path joins are computed (and tested) on any host.
 * CHOPIN_STATE_DIR and CHOPIN_CONFIG_DIR override the defaults, for tests and unusual setups.
 */
export function resolvePaths(options: {
	env: Readonly<Record<string, string | undefined>>;
	platform: Platform;
	cwd: string;
	defaults: PlatformDirs;
}): CliPaths {
	const { platform, cwd } = options;
	const join = (dir: string, name: string) => joinPath(platform, dir, name);
	// A relative override is taken from the working directory the command was started in.
	const stateDir = resolvePath(
		platform,
		cwd,
		nonEmpty(options.env.CHOPIN_STATE_DIR) ?? options.defaults.data,
	);
	const configDir = resolvePath(
		platform,
		cwd,
		nonEmpty(options.env.CHOPIN_CONFIG_DIR) ?? options.defaults.config,
	);
	const logDir = join(stateDir, "logs");
	return {
		stateDir,
		configDir,
		logDir,
		logFile: join(logDir, "chopin.log"),
		locksDir: join(stateDir, "locks"),
		checkoutLocksDir: joinPath(platform, options.defaults.cache, "locks"),
		credentialFile: join(stateDir, "credential.json"),
		machineConfigFile: join(configDir, "machine.json"),
		checkedFile: join(stateDir, "checked.json"),
		daemonExitFile: join(stateDir, "daemon-exit.json"),
		stopRequestFile: join(stateDir, "stop-request"),
		socket: socketPath(stateDir, options.platform),
	};
}

/**
 * The daemon's control socket. On Windows a named pipe lives in one global namespace, so its
 * name carries a hash of the state dir: two users (or a test's temp state dir) never collide.
 */
export function socketPath(stateDir: string, platform: Platform): string {
	if (platform === "win32") {
		// Bun's hasher, not node:crypto's createHash: importing node:crypto costs every command ~4 ms.
		const hash = new Bun.CryptoHasher("sha256").update(stateDir.toLowerCase()).digest("hex").slice(0, 16);
		return `\\\\.\\pipe\\chopin-${hash}`;
	}
	return joinPath(platform, stateDir, "chopin.sock");
}

/**
 * Creates a private directory (0700) and its missing parents. An existing directory keeps its
 * mode: chmod-ing a directory someone pointed CHOPIN_STATE_DIR at (say /tmp) would break it.
 */
export function ensurePrivateDir(dir: string): void {
	// Required here, not imported: node:fs costs ~4 ms to load, and a plain `chopin status` creates nothing.
	const { mkdirSync } = require("node:fs") as typeof import("node:fs");
	mkdirSync(dir, { recursive: true, mode: 0o700 });
}

function nonEmpty(value: string | undefined): string | undefined {
	return value === undefined || value.trim() === "" ? undefined : value;
}

/** The host platform narrowed to the three chopin supports (others are treated as Linux). */
export function toPlatform(value: string): Platform {
	return value === "darwin" || value === "win32" ? value : "linux";
}
