// The CLI's version and how it was installed, which decides the exact upgrade command chopin tells people to run.
import cliPackage from "../../package.json" with { type: "json" };
import type { Platform } from "../local/paths";
import { dirnamePath, joinPath, normalizePath } from "../local/plain-path";

/** Bundled from apps/cli/package.json when the binary is built. */
export const CLI_VERSION: string = cliPackage.version;

/**
 * - npm, pnpm, yarn, bun: that package manager installed `@chopin/cli` (globally, as a rule), and the binary runs from
 *   its `@chopin/cli-<os>-<arch>` package, or from `@chopin/cli/bin/chopin` where the install script put it there.
 * - script: install.sh / install.ps1 put the binary in the stable per-user ~/.chopin/bin.
 * - binary: a compiled binary anywhere else (downloaded from a release by hand).
 * - source: `bun apps/cli/src/main.ts` from a clone of the repository.
 */
export type InstallMethod = "npm" | "pnpm" | "yarn" | "bun" | "script" | "binary" | "source";

export interface InstallFacts {
	/** process.execPath: the binary itself when compiled, bun when run from source. */
	execPath: string;
	/** Bun.main: inside a compiled binary a path in its embedded file system. */
	main: string;
	platform: Platform;
	home: string;
}

/** True inside a `bun build --compile` binary, whose entry lives in /$bunfs/ (B:\~BUN\ on Windows). */
export function isCompiled(main: string): boolean {
	return main.startsWith("/$bunfs/") || /^[A-Za-z]:[\\/]~BUN[\\/]/.test(main);
}

export function detectInstallMethod(facts: InstallFacts): InstallMethod {
	if (!isCompiled(facts.main)) return "source";
	const manager = packageManager(facts.execPath);
	if (manager) return manager;
	const { platform } = facts;
	const sameDir = (a: string, b: string) =>
		platform === "win32"
			? normalizePath(platform, a).toLowerCase() === normalizePath(platform, b).toLowerCase()
			: a === b;
	if (sameDir(dirnamePath(platform, facts.execPath), scriptInstallDir(facts))) return "script";
	return "binary";
}

const NPM_PACKAGE_DIR = "/node_modules/@chopin/cli-";
/** Where @chopin/cli's install script puts the binary in place of the JS shim (npm/cli/install.js). */
const LAUNCHER_BIN = "/node_modules/@chopin/cli/bin/chopin";

/**
 * The package manager whose package the binary is in, told by the path each one installs to (the binary's real
 * path: symlinks resolved): pnpm's store (`node_modules/.pnpm/`), yarn's global folder (`~/.config/yarn/global`,
 * `%LOCALAPPDATA%\Yarn\Data\global`), bun's (`$BUN_INSTALL/install/global`, `~/.bun` by default), else npm.
 * Undefined outside a package.
 */
function packageManager(execPath: string): "npm" | "pnpm" | "yarn" | "bun" | undefined {
	const path = execPath.replaceAll("\\", "/").toLowerCase();
	if (!path.endsWith(LAUNCHER_BIN) && !isNpmPlatformBinary(path)) return undefined;
	if (path.includes("/node_modules/.pnpm/")) return "pnpm";
	if (path.includes("/yarn/global/node_modules/") || path.includes("/yarn/data/global/node_modules/"))
		return "yarn";
	if (path.includes("/install/global/node_modules/")) return "bun";
	return "npm";
}

/**
 * Whether the binary is inside an `@chopin/cli-<os>-<arch>` package (`path` lower case, forward slashes): string
 * tests, not a regular expression, since the first one a process compiles costs a plain `chopin status` ~0.2 ms.
 */
function isNpmPlatformBinary(path: string): boolean {
	for (let at = path.indexOf(NPM_PACKAGE_DIR); at >= 0; at = path.indexOf(NPM_PACKAGE_DIR, at + 1)) {
		const start = at + NPM_PACKAGE_DIR.length;
		const end = path.indexOf("/", start);
		const name = path.slice(start, end);
		if (end > start && [...name].every((c) => (c >= "a" && c <= "z") || (c >= "0" && c <= "9") || c === "-"))
			return true;
	}
	return false;
}

/** Where install.sh and install.ps1 put the binary (their CHOPIN_INSTALL_DIR default). */
export function scriptInstallDir(facts: Pick<InstallFacts, "platform" | "home">): string {
	return joinPath(facts.platform, facts.home, ".chopin", "bin");
}

/** The argv that starts this same CLI again (for a service unit, or a child of itself). */
export function selfCommand(facts: Pick<InstallFacts, "execPath" | "main">): string[] {
	return isCompiled(facts.main) ? [facts.execPath] : [facts.execPath, facts.main];
}

/**
 * The one command that upgrades this installation. `version` pins what to install (the server
 * names the version it needs); without it the installers take the latest release.
 */
export function upgradeCommand(
	method: InstallMethod,
	options: InstallFacts & { server: string; version?: string | undefined },
): string {
	const { platform, server, version } = options;
	switch (method) {
		case "npm":
		case "pnpm":
		case "yarn":
		case "bun":
			return packageManagerUpgrade(method, version ?? "latest");
		case "script":
			return installerCommand(platform, server, version, undefined);
		case "binary": {
			// Reinstall in place, where this binary is, rather than beside it.
			return installerCommand(platform, server, version, dirnamePath(platform, options.execPath));
		}
		case "source": {
			const root = sourceRoot(options.main);
			return `git -C ${shQuote(root)} pull --ff-only && bun install --cwd ${shQuote(root)}`;
		}
	}
}

/** The global install of @chopin/cli at `version` with the package manager that installed it. */
export function packageManagerUpgrade(manager: "npm" | "pnpm" | "yarn" | "bun", version: string): string {
	const spec = `@chopin/cli@${version}`;
	switch (manager) {
		case "npm":
			return `npm install -g ${spec}`;
		case "pnpm":
			return `pnpm add -g ${spec}`;
		case "yarn":
			return `yarn global add ${spec}`;
		case "bun":
			return `bun add -g ${spec}`;
	}
}

function installerCommand(
	platform: Platform,
	server: string,
	version: string | undefined,
	dir: string | undefined,
): string {
	if (platform === "win32") {
		const env = [
			version === undefined ? "" : `$env:CHOPIN_VERSION=${psQuote(version)}; `,
			dir === undefined ? "" : `$env:CHOPIN_INSTALL_DIR=${psQuote(dir)}; `,
		].join("");
		// A PowerShell command line, as a Windows terminal opens PowerShell by default.
		return `${env}irm ${server}/install.ps1 | iex`;
	}
	const env = [
		version === undefined ? "" : `CHOPIN_VERSION=${shQuote(version)} `,
		dir === undefined ? "" : `CHOPIN_INSTALL_DIR=${shQuote(dir)} `,
	].join("");
	return `curl -fsSL ${server}/install.sh | ${env}sh`;
}

/** The repository root for a source run: main is <root>/apps/cli/src/main.ts. */
function sourceRoot(main: string): string {
	const { posix, win32 } = require("node:path") as typeof import("node:path");
	const path = main.includes("\\") ? win32 : posix;
	return path.resolve(path.dirname(main), "..", "..", "..");
}

/** Quotes a word for sh only when it needs it. */
export function shQuote(word: string): string {
	return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

function psQuote(word: string): string {
	return `'${word.replaceAll("'", "''")}'`;
}

/** The upgrade command for the running CLI, from its context (the source root comes from its own entry). */
export function upgradeCommandFor(
	ctx: {
		installMethod: InstallMethod;
		execPath: string;
		selfCommand: readonly string[];
		platform: Platform;
		home: string;
	},
	server: string,
	version: string | undefined,
): string {
	return upgradeCommand(ctx.installMethod, {
		execPath: ctx.execPath,
		main: ctx.selfCommand.at(-1) ?? ctx.execPath,
		platform: ctx.platform,
		home: ctx.home,
		server,
		version,
	});
}
