// node:path's join, resolve and dirname for one platform, without loading node:path when the answer is plain string work.
//
// Importing node:path costs a plain `chopin status` about 0.5 ms, a tenth of its start (docs/install.md § Start-up
// time). Every path status builds is an absolute, already normal directory (from HOME, XDG_*, or an override) joined
// with fixed names, where node:path would only put slashes between them. Anything else (a relative or unnormalised
// directory, `..`, a doubled or trailing slash, and every Windows path) goes to node:path itself; plain-path.test.ts
// checks the two agree.
import type { Platform } from "./paths";

type NodePath = typeof import("node:path").posix;

function nodePath(platform: Platform): NodePath {
	const path = require("node:path") as typeof import("node:path");
	return platform === "win32" ? path.win32 : path.posix;
}

/** An absolute POSIX path node:path leaves as it is: no empty, `.` or `..` segment, and no trailing slash. */
function isNormalAbsolute(path: string): boolean {
	if (path === "/") return true;
	// String tests, not a regular expression: compiling one costs a start more than these.
	if (!path.startsWith("/") || path.endsWith("/") || path.endsWith("/.") || path.endsWith("/.."))
		return false;
	return !path.includes("//") && !path.includes("/./") && !path.includes("/../");
}

export function joinPath(platform: Platform, dir: string, ...names: string[]): string {
	if (platform !== "win32" && isNormalAbsolute(dir)) {
		// A plain loop: each callback is one more function run for the first time, which is what a start pays for.
		let joined = dir === "/" ? "" : dir;
		for (const name of names) {
			// A name that joins as it is: not empty, no separator, not `.` or `..`.
			if (name === "" || name === "." || name === ".." || name.includes("/"))
				return nodePath(platform).join(dir, ...names);
			joined += `/${name}`;
		}
		return joined;
	}
	return nodePath(platform).join(dir, ...names);
}

/** `path` taken from `cwd` when it is relative, normalised. */
export function resolvePath(platform: Platform, cwd: string, path: string): string {
	if (platform !== "win32" && isNormalAbsolute(path)) return path;
	return nodePath(platform).resolve(cwd, path);
}

export function dirnamePath(platform: Platform, path: string): string {
	if (platform !== "win32" && isNormalAbsolute(path) && path !== "/")
		return path.slice(0, path.lastIndexOf("/")) || "/";
	return nodePath(platform).dirname(path);
}

/** node:path's normalize, for comparing Windows paths (plain POSIX paths are already normal). */
export function normalizePath(platform: Platform, path: string): string {
	if (platform !== "win32" && isNormalAbsolute(path)) return path;
	return nodePath(platform).normalize(path);
}
