import { describe, expect, test } from "bun:test";
import cliPackage from "../../package.json" with { type: "json" };
import {
	CLI_VERSION,
	detectInstallMethod,
	type InstallFacts,
	type InstallMethod,
	isCompiled,
	scriptInstallDir,
	selfCommand,
	shQuote,
	upgradeCommand,
} from "./version";

const linux: InstallFacts = {
	execPath: "/home/me/.chopin/bin/chopin",
	main: "/$bunfs/root/chopin",
	platform: "linux",
	home: "/home/me",
};
const windows: InstallFacts = {
	execPath: "C:\\Users\\Me\\.chopin\\bin\\chopin.exe",
	main: "B:\\~BUN\\root\\chopin.exe",
	platform: "win32",
	home: "C:\\Users\\Me",
};

describe("the version", () => {
	test("comes from apps/cli/package.json", () => {
		expect(CLI_VERSION).toBe(cliPackage.version);
		expect(CLI_VERSION).toMatch(/^\d+\.\d+\.\d+/);
	});
});

describe("detectInstallMethod", () => {
	test("a compiled binary in ~/.chopin/bin came from the install script", () => {
		expect(detectInstallMethod(linux)).toBe("script");
		expect(
			detectInstallMethod({
				...linux,
				platform: "darwin",
				execPath: "/Users/me/.chopin/bin/chopin",
				home: "/Users/me",
			}),
		).toBe("script");
		expect(detectInstallMethod(windows)).toBe("script");
		expect(detectInstallMethod({ ...windows, execPath: "c:\\users\\me\\.chopin\\bin\\chopin.exe" })).toBe(
			"script",
		);
	});

	test("a binary inside an @chopin/cli-<os>-<arch> package came from npm", () => {
		expect(
			detectInstallMethod({
				...linux,
				execPath: "/usr/lib/node_modules/@chopin/cli/node_modules/@chopin/cli-linux-x64/bin/chopin",
			}),
		).toBe("npm");
		expect(
			detectInstallMethod({
				...windows,
				execPath:
					"C:\\Users\\Me\\AppData\\Roaming\\npm\\node_modules\\@chopin\\cli-win32-x64\\bin\\chopin.exe",
			}),
		).toBe("npm");
		expect(
			detectInstallMethod({
				...linux,
				execPath: "/x/node_modules/@chopin/cli-/node_modules/@Chopin/CLI-darwin-arm64/chopin",
			}),
		).toBe("npm");
	});

	test("only a package named @chopin/cli-<letters, digits, dashes> counts as npm's", () => {
		for (const execPath of [
			"/x/node_modules/@chopin/cli-/bin/chopin",
			"/x/node_modules/@chopin/cli-linux_x64/bin/chopin",
			"/x/node_modules/@chopin/cli-linux-x64",
			"/x/node_modules/@chopin/cli/bin/chopin-old",
		])
			expect({ execPath, method: detectInstallMethod({ ...linux, execPath }) }).toEqual({
				execPath,
				method: "binary",
			});
	});

	test("the binary install.js put at @chopin/cli/bin/chopin came from npm too", () => {
		expect(
			detectInstallMethod({ ...linux, execPath: "/usr/local/lib/node_modules/@chopin/cli/bin/chopin" }),
		).toBe("npm");
	});

	test("pnpm, yarn and bun global installs are told by where each puts its packages", () => {
		const cases: [string, InstallMethod][] = [
			[
				"/home/me/.local/share/pnpm/global/5/node_modules/.pnpm/@chopin+cli-linux-x64@1.2.3/node_modules/@chopin/cli-linux-x64/bin/chopin",
				"pnpm",
			],
			[
				"/Users/me/Library/pnpm/global/v10/node_modules/.pnpm/@chopin+cli@1.2.3/node_modules/@chopin/cli/bin/chopin",
				"pnpm",
			],
			["/home/me/.config/yarn/global/node_modules/@chopin/cli-linux-x64/bin/chopin", "yarn"],
			[
				"C:\\Users\\Me\\AppData\\Local\\Yarn\\Data\\global\\node_modules\\@chopin\\cli-win32-x64\\bin\\chopin.exe",
				"yarn",
			],
			["/home/me/.bun/install/global/node_modules/@chopin/cli-linux-x64/bin/chopin", "bun"],
			["/home/me/.bun/install/global/node_modules/@chopin/cli/bin/chopin", "bun"],
			["/opt/bun/install/global/node_modules/@chopin/cli-darwin-arm64/bin/chopin", "bun"],
			// Not in a package: what the directory is called does not matter.
			["/home/me/.bun/install/global/chopin", "binary"],
		];
		for (const [execPath, method] of cases)
			expect({ execPath, method: detectInstallMethod({ ...linux, execPath }) }).toEqual({ execPath, method });
	});

	test("a compiled binary anywhere else is a standalone binary", () => {
		expect(detectInstallMethod({ ...linux, execPath: "/usr/local/bin/chopin" })).toBe("binary");
		expect(detectInstallMethod({ ...linux, execPath: "/home/me/.chopin/bin-old/chopin" })).toBe("binary");
	});

	test("bun running main.ts is a source checkout", () => {
		expect(
			detectInstallMethod({
				...linux,
				execPath: "/usr/local/bin/bun",
				main: "/src/chopin/apps/cli/src/main.ts",
			}),
		).toBe("source");
	});

	test("isCompiled and selfCommand follow Bun's compiled layout", () => {
		expect(isCompiled("/$bunfs/root/chopin")).toBe(true);
		expect(isCompiled("B:\\~BUN\\root\\chopin.exe")).toBe(true);
		expect(isCompiled("B:/~BUN/root/chopin.exe")).toBe(true);
		expect(isCompiled("/src/apps/cli/src/main.ts")).toBe(false);
		expect(selfCommand(linux)).toEqual(["/home/me/.chopin/bin/chopin"]);
		expect(selfCommand({ execPath: "/usr/bin/bun", main: "/src/apps/cli/src/main.ts" })).toEqual([
			"/usr/bin/bun",
			"/src/apps/cli/src/main.ts",
		]);
	});

	test("scriptInstallDir", () => {
		expect(scriptInstallDir(linux)).toBe("/home/me/.chopin/bin");
		expect(scriptInstallDir(windows)).toBe("C:\\Users\\Me\\.chopin\\bin");
	});
});

describe("upgradeCommand", () => {
	const server = "https://chopin.example";

	test("npm", () => {
		expect(upgradeCommand("npm", { ...linux, server, version: "1.2.3" })).toBe(
			"npm install -g @chopin/cli@1.2.3",
		);
		expect(upgradeCommand("npm", { ...windows, server })).toBe("npm install -g @chopin/cli@latest");
	});

	test("pnpm, yarn and bun: each its own global install", () => {
		expect(upgradeCommand("pnpm", { ...linux, server, version: "1.2.3" })).toBe(
			"pnpm add -g @chopin/cli@1.2.3",
		);
		expect(upgradeCommand("yarn", { ...linux, server, version: "1.2.3" })).toBe(
			"yarn global add @chopin/cli@1.2.3",
		);
		expect(upgradeCommand("bun", { ...windows, server })).toBe("bun add -g @chopin/cli@latest");
	});

	test("the install script, from the server the machine is paired with", () => {
		expect(upgradeCommand("script", { ...linux, server })).toBe(
			"curl -fsSL https://chopin.example/install.sh | sh",
		);
		expect(upgradeCommand("script", { ...linux, server, version: "1.2.3" })).toBe(
			"curl -fsSL https://chopin.example/install.sh | CHOPIN_VERSION=1.2.3 sh",
		);
		expect(upgradeCommand("script", { ...windows, server, version: "1.2.3" })).toBe(
			"$env:CHOPIN_VERSION='1.2.3'; irm https://chopin.example/install.ps1 | iex",
		);
	});

	test("a standalone binary is reinstalled where it is", () => {
		expect(upgradeCommand("binary", { ...linux, execPath: "/opt/my tools/chopin", server })).toBe(
			"curl -fsSL https://chopin.example/install.sh | CHOPIN_INSTALL_DIR='/opt/my tools' sh",
		);
		expect(upgradeCommand("binary", { ...windows, execPath: "D:\\tools\\chopin.exe", server })).toBe(
			"$env:CHOPIN_INSTALL_DIR='D:\\tools'; irm https://chopin.example/install.ps1 | iex",
		);
	});

	test("a source checkout is pulled", () => {
		expect(upgradeCommand("source", { ...linux, main: "/src/chopin/apps/cli/src/main.ts", server })).toBe(
			"git -C /src/chopin pull --ff-only && bun install --cwd /src/chopin",
		);
	});

	test("shQuote quotes only when needed", () => {
		expect(shQuote("/a/b-c_d.e")).toBe("/a/b-c_d.e");
		expect(shQuote("it's here")).toBe("'it'\\''s here'");
	});
});
