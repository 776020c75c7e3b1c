import { describe, expect, test } from "bun:test";
import { posix, win32 } from "node:path";
import { dirnamePath, joinPath, normalizePath, resolvePath } from "./plain-path";

// Plain string work where node:path would do nothing else, node:path everywhere else: the answers must be node:path's.
const dirs = [
	"/",
	"/home/me",
	"/home/me/",
	"//home/me",
	"/home//me",
	"/home/./me",
	"/home/../me",
	"/home/me/..",
	"/home/me/.",
	"/home/.me",
	"/home/..me/x",
	"/home/me..",
	"relative",
	"./relative",
	"../up",
	"",
	"/a b/ç",
];
const names = [["chopin"], ["chopin.sock"], [".local", "share"], ["a", ".."], ["a/b"], [""], ["."]];

describe("plain-path agrees with node:path", () => {
	test("join", () => {
		for (const dir of dirs)
			for (const parts of names) expect(joinPath("linux", dir, ...parts)).toBe(posix.join(dir, ...parts));
	});

	test("resolve", () => {
		for (const path of dirs)
			expect(resolvePath("linux", "/work/x", path)).toBe(posix.resolve("/work/x", path));
	});

	test("dirname and normalize", () => {
		for (const path of dirs.filter(Boolean)) {
			expect(dirnamePath("darwin", path)).toBe(posix.dirname(path));
			expect(normalizePath("linux", path)).toBe(posix.normalize(path));
		}
	});

	test("Windows paths go to node:path's win32 rules", () => {
		expect(joinPath("win32", "C:\\Users\\me\\", "AppData", "Local")).toBe(
			win32.join("C:\\Users\\me\\", "AppData", "Local"),
		);
		expect(resolvePath("win32", "C:\\work", "state")).toBe("C:\\work\\state");
		expect(dirnamePath("win32", "C:\\a\\b.exe")).toBe("C:\\a");
		expect(normalizePath("win32", "C:/a//b")).toBe("C:\\a\\b");
	});
});
