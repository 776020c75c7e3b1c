// npm's global layout and the command line of a `.cmd`, for every platform, checked on this one: the Windows branch is
// what the launcher test relies on there (npm/launcher.test.ts runs it for real on the Windows runner).
import { describe, expect, test } from "bun:test";
import { commandLine, npmGlobalLayout, platformEnv, searchPath } from "./npm-global";

describe("npmGlobalLayout", () => {
	for (const platform of ["linux", "darwin"]) {
		test(`on ${platform}: <prefix>/bin/<name>, a symlink, and packages in <prefix>/lib/node_modules`, () => {
			const layout = npmGlobalLayout("/tmp/p", "chopin", platform);
			expect(layout).toMatchObject({
				binDir: "/tmp/p/bin",
				command: "/tmp/p/bin/chopin",
				shims: ["/tmp/p/bin/chopin"],
				nodeModules: "/tmp/p/lib/node_modules",
			});
			expect(layout.packageDir("@chopin/cli")).toBe("/tmp/p/lib/node_modules/@chopin/cli");
			expect(layout.packageDir("left-pad")).toBe("/tmp/p/lib/node_modules/left-pad");
		});
	}

	test("on win32: .cmd, .ps1 and sh shims in the prefix itself, and packages in <prefix>\\node_modules", () => {
		const layout = npmGlobalLayout("C:\\Users\\ana\\AppData\\Local\\Temp\\p", "chopin", "win32");
		const prefix = "C:\\Users\\ana\\AppData\\Local\\Temp\\p";
		expect(layout).toMatchObject({
			binDir: prefix,
			command: `${prefix}\\chopin.cmd`,
			shims: [`${prefix}\\chopin`, `${prefix}\\chopin.cmd`, `${prefix}\\chopin.ps1`],
			nodeModules: `${prefix}\\node_modules`,
		});
		expect(layout.packageDir("@chopin/cli-win32-x64")).toBe(
			`${prefix}\\node_modules\\@chopin\\cli-win32-x64`,
		);
	});
});

describe("commandLine", () => {
	test("runs a program directly, and anything but a .cmd or .bat directly on Windows too", () => {
		expect(commandLine("/p/bin/chopin", ["status", "--json"], { platform: "linux" })).toEqual({
			cmd: ["/p/bin/chopin", "status", "--json"],
			windowsVerbatimArguments: false,
		});
		// A .cmd is only a file name elsewhere.
		expect(commandLine("/p/x.cmd", ["a b"], { platform: "darwin" }).cmd).toEqual(["/p/x.cmd", "a b"]);
		expect(commandLine("C:\\p\\node.exe", ["a b"], { platform: "win32" })).toEqual({
			cmd: ["C:\\p\\node.exe", "a b"],
			windowsVerbatimArguments: false,
		});
	});

	test("on Windows runs a .cmd as Node's shell option does: cmd.exe /d /s /c, the file and the arguments quoted", () => {
		const comspec = "C:\\Windows\\system32\\cmd.exe";
		expect(
			commandLine("C:\\Program Files\\p\\chopin.cmd", ["connect", "gemini", "--acp"], {
				platform: "win32",
				comspec,
			}),
		).toEqual({
			cmd: [comspec, "/d", "/s", "/c", '""C:\\Program Files\\p\\chopin.cmd" connect gemini --acp"'],
			windowsVerbatimArguments: true,
		});
		// Paths with a space or cmd.exe's operators are quoted; inside quotes cmd.exe takes them as they are.
		const line = commandLine(
			"C:\\p\\npm.CMD",
			["install", "--prefix", "C:\\a b\\p", "x&y", "C:\\RUNNER~1\\t.tgz"],
			{
				platform: "win32",
				comspec,
			},
		);
		expect(line.cmd.at(-1)).toBe(
			'""C:\\p\\npm.CMD" install --prefix "C:\\a b\\p" "x&y" C:\\RUNNER~1\\t.tgz"',
		);
	});

	test("refuses what cmd.exe would rewrite even in quotes: a quote, %, !, ^ or a line break", () => {
		for (const word of ['say "hi"', "%PATH%", "wow!", "a^b", "a\nb"]) {
			expect(() => commandLine("C:\\p\\chopin.cmd", [word], { platform: "win32" })).toThrow(
				`cmd.exe would rewrite the argument ${JSON.stringify(word)}`,
			);
		}
	});
});

describe("platformEnv", () => {
	test("keeps what Windows programs need beyond PATH, and nothing else; nothing at all elsewhere", () => {
		const env = {
			SystemRoot: "C:\\Windows",
			ComSpec: "C:\\Windows\\system32\\cmd.exe",
			PATHEXT: ".COM;.EXE;.BAT;.CMD",
			TEMP: "C:\\t",
			Path: "C:\\Windows",
			GITHUB_TOKEN: "x",
		};
		expect(platformEnv("win32", env)).toEqual({
			SystemRoot: "C:\\Windows",
			ComSpec: "C:\\Windows\\system32\\cmd.exe",
			PATHEXT: ".COM;.EXE;.BAT;.CMD",
			TEMP: "C:\\t",
		});
		expect(platformEnv("linux", env)).toEqual({});
	});
});

test("searchPath reads PATH, or Windows' Path from a copied environment", () => {
	expect(searchPath({ PATH: "/usr/bin" })).toBe("/usr/bin");
	expect(searchPath({ Path: "C:\\Windows" })).toBe("C:\\Windows");
	expect(searchPath({})).toBe("");
});
