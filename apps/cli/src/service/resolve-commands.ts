// Whether the commands the daemon starts (the ACP agent, the Planner backend, git) will resolve under the service's
// PATH, checked before anything is installed: a service that cannot find its agent fails hours later, at boot.
import type { Platform } from "../local/paths";
import { CliError } from "../program/errors";
import { currentPath, droppedBecause, type PathFacts, servicePathEntries, splitPath } from "./service-path";

/** The file system questions resolution asks; a parameter so the Windows branch (PATHEXT, `\`) runs on Linux. */
export interface FileProbe {
	/** Whether the file exists and this user may run it (POSIX: an execute bit; Windows: a file). */
	isRunnable(path: string): boolean;
	/** A directory's real path (symlinks followed), or undefined when it cannot be resolved. */
	realDir(path: string): string | undefined;
}

/** The real file system of this computer. */
export function hostFiles(platform: Platform): FileProbe {
	const fs = require("node:fs") as typeof import("node:fs");
	return {
		isRunnable(path) {
			try {
				if (!fs.statSync(path).isFile()) return false;
				if (platform !== "win32") fs.accessSync(path, fs.constants.X_OK);
				return true;
			} catch {
				return false;
			}
		},
		realDir(path) {
			try {
				return fs.realpathSync(path);
			} catch {
				return undefined;
			}
		},
	};
}

export interface ServiceCommand {
	/** What it is, for the error: "the ACP agent", "the Planner backend", "git". */
	what: string;
	/** The word the daemon starts (machine.json's acpCommand[0], planner.command[0], or "git"). */
	command: string;
	/** Whether its directory goes first on the service's PATH (the agent's and the Planner's do). */
	first: boolean;
}

export interface ServiceCommands {
	/** The service's PATH entries (on Windows: the entries the check used; no PATH is written there). */
	path: string[];
	/** Where each command resolved under it. */
	resolved: { what: string; command: string; at: string }[];
	/** What was left out of the current PATH, and why. */
	dropped: { entry: string; why: string }[];
}

/**
 * Builds the service's PATH (service-path.ts) with the directories of the agent and Planner commands first, and
 * checks that every command resolves under it. A command found only in a directory that does not last (a per-shell
 * fnm directory, say) contributes that directory's real path when it has a lasting one: fnm_multishells/<id> is a
 * link to the Node version's own directory. Anything that does not resolve is one CliError naming each.
 *
 * On Windows the task gets the user's own environment, so `first` is not added (nothing would carry it there): the
 * commands must resolve under the current PATH without its per-shell entries.
 */
export function resolveServiceCommands(
	facts: PathFacts,
	files: FileProbe,
	commands: readonly ServiceCommand[],
): ServiceCommands {
	const { platform, env } = facts;
	const current = currentPath(platform, env);
	const here = splitPath(platform, current).filter((entry) => entry !== "");
	const first: string[] = [];
	const foundHere = new Map<ServiceCommand, string | undefined>();
	for (const command of commands) {
		const found = resolveCommand(platform, env, files, command.command, here);
		foundHere.set(command, found);
		if (!found || !command.first || platform === "win32") continue;
		const dir = parentDir(platform, found);
		if (!droppedBecause(dir, facts)) first.push(dir);
		else {
			const real = files.realDir(dir);
			if (real && !droppedBecause(real, facts)) first.push(real);
		}
	}
	const { entries, dropped } = servicePathEntries(facts, current, first);
	const resolved: ServiceCommands["resolved"] = [];
	const problems: string[] = [];
	for (const command of commands) {
		const at = resolveCommand(platform, env, files, command.command, entries);
		if (at) {
			resolved.push({ what: command.what, command: command.command, at });
			continue;
		}
		const found = foundHere.get(command);
		const name =
			command.what === command.command ? `\`${command.command}\`` : `${command.what} \`${command.command}\``;
		if (isPathLike(platform, command.command) && !isAbsolutePath(platform, command.command))
			problems.push(`${name} (a relative path: give its absolute path)`);
		else if (!found)
			problems.push(`${name} (not found${isPathLike(platform, command.command) ? "" : " on PATH"})`);
		else {
			const why = droppedBecause(parentDir(platform, found), facts) ?? "left out of the service's PATH";
			problems.push(`${name} (found at ${found}, ${why})`);
		}
	}
	if (problems.length > 0) {
		throw new CliError(
			"service-command-unresolved",
			`The service could not start ${problems.join(", ")}: nothing was installed.`,
			platform === "win32"
				? "Install it where your user's PATH finds it after you log in again (not a per-shell directory), or name it by its absolute path in `chopin connect`; then run `chopin service install` again."
				: "Install it in a directory that stays after a reboot (not a per-shell or temporary one), or name it by its absolute path in `chopin connect`; then run `chopin service install` again.",
		);
	}
	return { path: entries, resolved, dropped };
}

/**
 * Where `command` resolves among `entries`, as the daemon's spawn will find it: an absolute command as it is, a bare
 * name in each entry in order (on Windows with each PATHEXT extension unless it already has one of them).
 */
export function resolveCommand(
	platform: Platform,
	env: Readonly<Record<string, string | undefined>>,
	files: FileProbe,
	command: string,
	entries: readonly string[],
): string | undefined {
	const candidates = (base: string) => (platform === "win32" ? withExtensions(env, base) : [base]);
	if (isPathLike(platform, command)) {
		if (!isAbsolutePath(platform, command)) return undefined;
		return candidates(command).find((file) => files.isRunnable(file));
	}
	for (const dir of entries) {
		const found = candidates(joinDir(platform, dir, command)).find((file) => files.isRunnable(file));
		if (found) return found;
	}
	return undefined;
}

const DEFAULT_PATHEXT = ".COM;.EXE;.BAT;.CMD";

/** A Windows name as it is when it has a PATHEXT extension, else with each extension (as cmd.exe and `where` try). */
function withExtensions(env: Readonly<Record<string, string | undefined>>, base: string): string[] {
	const key = Object.keys(env).find((k) => k.toUpperCase() === "PATHEXT" && env[k] !== undefined);
	const extensions = (key ? env[key] : undefined) || DEFAULT_PATHEXT;
	const list = extensions
		.split(";")
		.map((ext) => ext.trim())
		.filter((ext) => ext.startsWith("."));
	const name = base.slice(Math.max(base.lastIndexOf("\\"), base.lastIndexOf("/")) + 1);
	const dot = name.lastIndexOf(".");
	const ext = dot > 0 ? name.slice(dot).toLowerCase() : "";
	if (ext && list.some((e) => e.toLowerCase() === ext)) return [base];
	return list.map((e) => `${base}${e}`);
}

function isPathLike(platform: Platform, command: string): boolean {
	return command.includes("/") || (platform === "win32" && command.includes("\\"));
}

function isAbsolutePath(platform: Platform, path: string): boolean {
	if (platform === "win32") return /^[A-Za-z]:[\\/]/.test(path) || /^[\\/]{2}[^\\/]/.test(path);
	return path.startsWith("/");
}

function joinDir(platform: Platform, dir: string, name: string): string {
	const separator = platform === "win32" ? "\\" : "/";
	return dir.endsWith(separator) || dir.endsWith("/") ? `${dir}${name}` : `${dir}${separator}${name}`;
}

function parentDir(platform: Platform, path: string): string {
	const at =
		platform === "win32" ? Math.max(path.lastIndexOf("\\"), path.lastIndexOf("/")) : path.lastIndexOf("/");
	if (at <= 0) return platform === "win32" ? path : "/";
	// C:\agent.exe's directory is C:\, not C:
	return platform === "win32" && at === 2 && path[1] === ":" ? path.slice(0, 3) : path.slice(0, at);
}
