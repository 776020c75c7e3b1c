// The PATH a service runs with: what this shell can run, minus what will not be there after a reboot or outside this shell.
//
// A service starts at boot, long after the shell that installed it is gone, so an entry that only this login session
// or this shell made would point at nothing (or, worse, at another session's directory). Each rule below names why
// its entries do not last; docs/cli.md § The service's PATH has the same list.
import type { Platform } from "../local/paths";

type Env = Readonly<Record<string, string | undefined>>;

export interface PathFacts {
	platform: Platform;
	env: Env;
	/** The user's numeric id (POSIX): /run/user/<uid> is their runtime directory. */
	uid: number;
}

/** Why an entry is left out of a service's PATH, or undefined when it stays. */
export function droppedBecause(entry: string, facts: PathFacts): string | undefined {
	const { platform, env } = facts;
	if (entry.trim() === "") return "empty";
	if (!isAbsolute(platform, entry)) return "relative (it depends on the directory a command starts in)";
	const segments = splitSegments(platform, entry);
	const has = (name: string) => segments.some((s) => same(platform, s, name));
	// fnm: `fnm env` links a directory per shell (<pid>_<time>) under fnm_multishells, removed with that shell's session.
	if (has("fnm_multishells")) return "a per-shell directory of fnm (fnm_multishells)";
	// vfox: `vfox activate` links the session's versions under ~/.version-fox/temp/<time>-<pid>, one per shell.
	if (
		segments.some(
			(s, i) => same(platform, s, ".version-fox") && same(platform, segments[i + 1] ?? "", "temp"),
		)
	)
		return "a per-shell directory of vfox (.version-fox/temp)";
	if (platform !== "win32") {
		// The login session's runtime directory: a tmpfs systemd-logind removes at logout and that is empty at boot.
		const runtimeDirs = [env.XDG_RUNTIME_DIR, facts.uid >= 0 ? `/run/user/${facts.uid}` : undefined];
		for (const dir of runtimeDirs) {
			if (dir && isUnder(platform, entry, dir)) return `under the login session's runtime directory ${dir}`;
		}
	}
	// Temp directories are emptied at boot (and by cleaners): `bun run` puts a node shim in /tmp/bun-node-<hash>.
	for (const dir of tempDirs(platform, env)) {
		if (isUnder(platform, entry, dir)) return `under the temporary directory ${dir}`;
	}
	return undefined;
}

/**
 * The service's PATH entries: `first` (the directories of the resolved ACP agent and Planner commands), then the
 * current PATH's entries in order, each once, without the entries droppedBecause names.
 */
export function servicePathEntries(
	facts: PathFacts,
	current: string | undefined,
	first: readonly string[] = [],
): { entries: string[]; dropped: { entry: string; why: string }[] } {
	const entries: string[] = [];
	const dropped: { entry: string; why: string }[] = [];
	const seen = new Set<string>();
	for (const raw of [...first, ...splitPath(facts.platform, current)]) {
		const entry = withoutTrailingSeparator(facts.platform, raw);
		const key = facts.platform === "win32" ? entry.toLowerCase().replaceAll("/", "\\") : entry;
		if (seen.has(key)) continue;
		seen.add(key);
		const why = droppedBecause(entry, facts);
		if (why) dropped.push({ entry: raw, why });
		else entries.push(entry);
	}
	return { entries, dropped };
}

/** PATH's separator: `;` on Windows, `:` elsewhere. */
export function pathDelimiter(platform: Platform): string {
	return platform === "win32" ? ";" : ":";
}

/** PATH as its entries (Windows spells it Path as often as PATH: any case is read). */
export function currentPath(platform: Platform, env: Env): string | undefined {
	if (platform !== "win32") return env.PATH;
	const key = Object.keys(env).find((k) => k.toUpperCase() === "PATH" && env[k] !== undefined);
	return key === undefined ? undefined : env[key];
}

export function splitPath(platform: Platform, path: string | undefined): string[] {
	return path === undefined || path === "" ? [] : path.split(pathDelimiter(platform));
}

function tempDirs(platform: Platform, env: Env): string[] {
	if (platform === "win32") return [env.TEMP, env.TMP].filter((d): d is string => Boolean(d));
	return ["/tmp", env.TMPDIR].filter((d): d is string => Boolean(d && isAbsolute(platform, d)));
}

function isAbsolute(platform: Platform, path: string): boolean {
	// Windows: a drive (C:\ or C:/) or a UNC path (\\server\share).
	if (platform === "win32") return /^[A-Za-z]:[\\/]/.test(path) || /^[\\/]{2}[^\\/]/.test(path);
	return path.startsWith("/");
}

function splitSegments(platform: Platform, path: string): string[] {
	return path.split(platform === "win32" ? /[\\/]+/ : /\/+/).filter((s) => s !== "");
}

function same(platform: Platform, a: string, b: string): boolean {
	return platform === "win32" ? a.toLowerCase() === b.toLowerCase() : a === b;
}

function withoutTrailingSeparator(platform: Platform, path: string): string {
	const trimmed = platform === "win32" ? path.replace(/(?<=.)[\\/]+$/, "") : path.replace(/(?<=.)\/+$/, "");
	// C:\ stays C:\ (C: alone means the drive's current directory).
	return platform === "win32" && /^[A-Za-z]:$/.test(trimmed) ? `${trimmed}\\` : trimmed;
}

/** Whether `path` is `dir` or inside it, compared segment by segment. */
function isUnder(platform: Platform, path: string, dir: string): boolean {
	const p = splitSegments(platform, path);
	const d = splitSegments(platform, dir);
	if (d.length === 0 || p.length < d.length) return false;
	return d.every((segment, i) => same(platform, segment, p[i]!));
}
