import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "../testing/context";
import { ensurePrivateDir, homeDir, platformDirs, resolvePaths, socketPath, toPlatform } from "./paths";

const defaults = {
	data: "/home/me/.local/share/chopin",
	config: "/home/me/.config/chopin",
	cache: "/home/me/.cache/chopin",
};
const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("resolvePaths", () => {
	test("lays out state and config under the platform's dirs", () => {
		const paths = resolvePaths({ env: {}, platform: "linux", cwd: "/work", defaults });
		expect(paths).toEqual({
			stateDir: "/home/me/.local/share/chopin",
			configDir: "/home/me/.config/chopin",
			logDir: "/home/me/.local/share/chopin/logs",
			logFile: "/home/me/.local/share/chopin/logs/chopin.log",
			locksDir: "/home/me/.local/share/chopin/locks",
			checkoutLocksDir: "/home/me/.cache/chopin/locks",
			credentialFile: "/home/me/.local/share/chopin/credential.json",
			checkedFile: "/home/me/.local/share/chopin/checked.json",
			daemonExitFile: "/home/me/.local/share/chopin/daemon-exit.json",
			stopRequestFile: "/home/me/.local/share/chopin/stop-request",
			machineConfigFile: "/home/me/.config/chopin/machine.json",
			socket: "/home/me/.local/share/chopin/chopin.sock",
		});
	});

	test("CHOPIN_STATE_DIR and CHOPIN_CONFIG_DIR override, relative to the working directory", () => {
		const paths = resolvePaths({
			env: { CHOPIN_STATE_DIR: "state", CHOPIN_CONFIG_DIR: "/etc/chopin" },
			platform: "darwin",
			cwd: "/work",
			defaults,
		});
		expect(paths.stateDir).toBe("/work/state");
		expect(paths.credentialFile).toBe("/work/state/credential.json");
		expect(paths.configDir).toBe("/etc/chopin");
		expect(paths.socket).toBe("/work/state/chopin.sock");
	});

	test("an empty override is ignored", () => {
		const paths = resolvePaths({ env: { CHOPIN_STATE_DIR: " " }, platform: "linux", cwd: "/work", defaults });
		expect(paths.stateDir).toBe(defaults.data);
	});

	test("Windows paths and a named pipe that depends on the state dir", () => {
		const windows = {
			data: "C:\\Users\\me\\AppData\\Local\\chopin\\Data",
			config: "C:\\Users\\me\\AppData\\Roaming\\chopin\\Config",
			cache: "C:\\Users\\me\\AppData\\Local\\chopin\\Cache",
		};
		const paths = resolvePaths({ env: {}, platform: "win32", cwd: "C:\\work", defaults: windows });
		expect(paths.credentialFile).toBe("C:\\Users\\me\\AppData\\Local\\chopin\\Data\\credential.json");
		expect(paths.logFile).toBe("C:\\Users\\me\\AppData\\Local\\chopin\\Data\\logs\\chopin.log");
		expect(paths.socket).toMatch(/^\\\\\.\\pipe\\chopin-[0-9a-f]{16}$/);
		expect(socketPath("C:\\A", "win32")).toBe(socketPath("c:\\a", "win32"));
		expect(socketPath("C:\\A", "win32")).not.toBe(socketPath("C:\\B", "win32"));
	});

	test("toPlatform narrows process.platform", () => {
		expect(toPlatform("darwin")).toBe("darwin");
		expect(toPlatform("win32")).toBe("win32");
		expect(toPlatform("linux")).toBe("linux");
		expect(toPlatform("freebsd")).toBe("linux");
	});
});

describe("platformDirs", () => {
	/** What env-paths itself answers on this host (Linux) for `env`, in a process of its own: it reads HOME once, as it loads. */
	function envPathsAnswer(env: Record<string, string>): { data: string; config: string; cache: string } {
		const source = `import envPaths from "env-paths"; const d = envPaths("chopin", { suffix: "" }); console.log(JSON.stringify({ data: d.data, config: d.config, cache: d.cache }));`;
		const run = Bun.spawnSync([process.execPath, "-e", source], {
			cwd: import.meta.dir,
			env: { PATH: process.env.PATH ?? "", ...env },
		});
		if (run.exitCode !== 0) throw new Error(run.stderr.toString());
		return JSON.parse(run.stdout.toString());
	}

	const cases: Record<string, string>[] = [
		{ HOME: "/home/me" },
		{ HOME: "/home/me/" },
		{ HOME: "/home//me/./x/.." },
		{ HOME: "/home/me", XDG_DATA_HOME: "/data", XDG_CONFIG_HOME: "/conf/", XDG_CACHE_HOME: "/cache" },
		{ HOME: "/home/me", XDG_DATA_HOME: "", XDG_CONFIG_HOME: "" },
		{ HOME: "/home/me", XDG_DATA_HOME: "relative/data", XDG_CONFIG_HOME: "../conf" },
		{ HOME: "/" },
	];
	for (const env of cases) {
		test(`Linux: the same directories as env-paths for ${JSON.stringify(env)}`, () => {
			if (process.platform !== "linux") return;
			expect(platformDirs("linux", env, homeDir("linux", env))).toEqual(envPathsAnswer(env));
		});
	}

	test("macOS: under ~/Library", () => {
		expect(platformDirs("darwin", {}, "/Users/me")).toEqual({
			data: "/Users/me/Library/Application Support/chopin",
			config: "/Users/me/Library/Preferences/chopin",
			cache: "/Users/me/Library/Caches/chopin",
		});
	});

	test("Windows: %LOCALAPPDATA% and %APPDATA%, else under the profile", () => {
		expect(
			platformDirs("win32", { LOCALAPPDATA: "D:\\Local", APPDATA: "D:\\Roaming\\" }, "C:\\Users\\me"),
		).toEqual({
			data: "D:\\Local\\chopin\\Data",
			config: "D:\\Roaming\\chopin\\Config",
			cache: "D:\\Local\\chopin\\Cache",
		});
		expect(platformDirs("win32", {}, "C:\\Users\\me")).toEqual({
			data: "C:\\Users\\me\\AppData\\Local\\chopin\\Data",
			config: "C:\\Users\\me\\AppData\\Roaming\\chopin\\Config",
			cache: "C:\\Users\\me\\AppData\\Local\\chopin\\Cache",
		});
	});

	test("the home directory: HOME (USERPROFILE on Windows), else the account's", () => {
		expect(homeDir("linux", { HOME: "/home/me" })).toBe("/home/me");
		expect(homeDir("win32", { USERPROFILE: "C:\\Users\\me", HOME: "/x" })).toBe("C:\\Users\\me");
		expect(homeDir("linux", {})).toBe(require("node:os").userInfo().homedir);
		expect(homeDir("linux", { HOME: "" })).toBe(require("node:os").userInfo().homedir);
	});
});

describe("ensurePrivateDir", () => {
	test("creates missing directories at 0700", () => {
		const root = makeTempDir();
		dirs.push(root);
		const dir = join(root, "a", "b");
		ensurePrivateDir(dir);
		expect(statSync(dir).mode & 0o777).toBe(0o700);
		expect(statSync(join(root, "a")).mode & 0o777).toBe(0o700);
	});

	test("leaves an existing directory's mode alone", () => {
		const root = makeTempDir();
		dirs.push(root);
		const dir = join(root, "shared");
		mkdirSync(dir, { mode: 0o755 });
		ensurePrivateDir(dir);
		expect(statSync(dir).mode & 0o777).toBe(0o755);
	});
});
