// Where chopin keeps its state (credential, locks, socket, logs) and its config, per platform.
import { posix, win32 } from "node:path";
import envPaths from "env-paths";

export type Platform = "linux" | "darwin" | "win32";

export interface CliPaths {
	/** Credential, locks, the control socket and logs. Created at 0700. */
	readonly stateDir: string;
	/** machine.json. Created at 0700. */
	readonly configDir: string;
	readonly logDir: string;
	readonly logFile: string;
	readonly locksDir: string;
	readonly credentialFile: string;
	readonly machineConfigFile: string;
	/** Digests of the files a full check accepted (checked-files.ts). */
	readonly checkedFile: string;
	/** A Unix socket path, or a Windows named pipe name. */
	readonly socket: string;
}

export interface PlatformDirs {
	readonly data: string;
	readonly config: string;
}

/** env-paths' answer for this host: `chopin` with no `-nodejs` suffix. */
export function hostDirs(): PlatformDirs {
	const dirs = envPaths("chopin", { suffix: "" });
	return { data: dirs.data, config: dirs.config };
}

/**
 * The paths for one platform. `defaults` comes from env-paths on the real host; the platform is a
 * parameter so Windows' named pipe and path joins are computed (and tested) on any host.
 * CHOPIN_STATE_DIR and CHOPIN_CONFIG_DIR override the defaults, for tests and unusual setups.
 */
export function resolvePaths(options: {
	env: Readonly<Record<string, string | undefined>>;
	platform: Platform;
	cwd: string;
	defaults: PlatformDirs;
}): CliPaths {
	const path = options.platform === "win32" ? win32 : posix;
	// A relative override is taken from the working directory the command was started in.
	const stateDir = path.resolve(options.cwd, nonEmpty(options.env.CHOPIN_STATE_DIR) ?? options.defaults.data);
	const configDir = path.resolve(
		options.cwd,
		nonEmpty(options.env.CHOPIN_CONFIG_DIR) ?? options.defaults.config,
	);
	const logDir = path.join(stateDir, "logs");
	return {
		stateDir,
		configDir,
		logDir,
		logFile: path.join(logDir, "chopin.log"),
		locksDir: path.join(stateDir, "locks"),
		credentialFile: path.join(stateDir, "credential.json"),
		machineConfigFile: path.join(configDir, "machine.json"),
		checkedFile: path.join(stateDir, "checked.json"),
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
	return posix.join(stateDir, "chopin.sock");
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
