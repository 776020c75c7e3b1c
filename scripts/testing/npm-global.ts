// Where `npm install -g --prefix <prefix>` puts a package's command and packages on each platform, and how to run that
// command as its users do, so the npm launcher's tests and bench run on Linux, macOS and Windows alike. The platform is
// a parameter: a test on Linux checks the Windows paths and command line too.
import { posix, win32 } from "node:path";

export interface NpmGlobalLayout {
	/** The directory npm puts bin shims in: `<prefix>/bin`, or the prefix itself on Windows. */
	readonly binDir: string;
	/** What a user runs: `<prefix>/bin/<name>` (a symlink to the package's bin file), or `<prefix>\<name>.cmd`. */
	readonly command: string;
	/** Every file npm writes for the command: the symlink, or on Windows the `.cmd`, `.ps1` and sh shims. */
	readonly shims: readonly string[];
	/** The global packages: `<prefix>/lib/node_modules`, or `<prefix>\node_modules` on Windows. */
	readonly nodeModules: string;
	/** A package's directory under nodeModules (`@chopin/cli`, scoped names included). */
	packageDir(name: string): string;
}

/** The layout of a global install into `prefix` on `platform` (process.platform's names). */
export function npmGlobalLayout(
	prefix: string,
	name: string,
	platform: string = process.platform,
): NpmGlobalLayout {
	const path = platform === "win32" ? win32 : posix;
	const windows = platform === "win32";
	const binDir = windows ? prefix : path.join(prefix, "bin");
	const nodeModules = windows ? path.join(prefix, "node_modules") : path.join(prefix, "lib", "node_modules");
	const bare = path.join(binDir, name);
	return {
		binDir,
		command: windows ? `${bare}.cmd` : bare,
		shims: windows ? [bare, `${bare}.cmd`, `${bare}.ps1`] : [bare],
		nodeModules,
		packageDir: (pkg) => path.join(nodeModules, ...pkg.split("/")),
	};
}

/** An argv for Bun.spawn, and whether Windows must pass it on unquoted (it is a cmd.exe command line already). */
export interface CommandLine {
	readonly cmd: string[];
	readonly windowsVerbatimArguments: boolean;
}

/** Arguments cmd.exe passes on unchanged inside double quotes: no quote, no `%` or `!` expansion, no caret. */
const CMD_SAFE = /^[^"%!^\r\n]*$/;
const CMD_BARE = /^[\w@+=:,./\\~-]+$/;

/**
 * How a user's shell runs `file` with `args`: directly, except a `.cmd` on Windows, which only cmd.exe runs. That goes
 * the way Node's `shell: true` does: `cmd.exe /d /s /c ""<file>" <args>"`, verbatim, so that cmd.exe (not the spawner)
 * reads the quotes, as when a person types `chopin --version` in a console. Arguments cmd.exe would rewrite are refused:
 * no quoting makes them safe there.
 */
export function commandLine(
	file: string,
	args: readonly string[],
	options: { platform?: string; comspec?: string } = {},
): CommandLine {
	const platform = options.platform ?? process.platform;
	if (platform !== "win32" || !/\.(cmd|bat)$/i.test(file))
		return { cmd: [file, ...args], windowsVerbatimArguments: false };
	for (const word of [file, ...args]) {
		if (!CMD_SAFE.test(word)) throw new Error(`cmd.exe would rewrite the argument ${JSON.stringify(word)}`);
	}
	const quoted = args.map((word) => (CMD_BARE.test(word) ? word : `"${word}"`));
	const comspec = options.comspec ?? process.env.ComSpec ?? "cmd.exe";
	return {
		cmd: [comspec, "/d", "/s", "/c", `""${file}"${quoted.map((word) => ` ${word}`).join("")}"`],
		windowsVerbatimArguments: true,
	};
}

/**
 * What a Windows program needs from the environment beyond PATH (Node, npm's `.cmd` shims and cmd.exe read these:
 * the system root, the shell, the extensions a bare name may have, temp and profile folders). Empty elsewhere, so a test
 * can build its environment from scratch on every platform.
 */
export function platformEnv(platform: string = process.platform, env: NodeJS.ProcessEnv = process.env) {
	if (platform !== "win32") return {};
	const keep = ["SystemRoot", "SystemDrive", "windir", "ComSpec", "PATHEXT", "TEMP", "TMP", "USERPROFILE"];
	keep.push(
		"APPDATA",
		"LOCALAPPDATA",
		"ProgramData",
		"ProgramFiles",
		"NUMBER_OF_PROCESSORS",
		"PROCESSOR_ARCHITECTURE",
	);
	const picked: Record<string, string> = {};
	for (const key of keep) {
		const value = env[key];
		if (value !== undefined) picked[key] = value;
	}
	return picked;
}

/** This process's PATH: Windows spells it `Path`, which only a case-blind process.env finds as `PATH`. */
export function searchPath(env: NodeJS.ProcessEnv = process.env): string {
	return env.PATH ?? env.Path ?? "";
}
