import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { CliError } from "../program/errors";
import { durableTempDir, touch, windowsFiles } from "../testing/service";
import { hostFiles, resolveCommand, resolveServiceCommands } from "./resolve-commands";

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function root(): string {
	const dir = durableTempDir();
	dirs.push(dir);
	return dir;
}

function unresolved(run: () => unknown): CliError {
	try {
		run();
	} catch (error) {
		if (error instanceof CliError) return error;
		throw error;
	}
	throw new Error("expected service-command-unresolved");
}

const files = hostFiles("linux");

describe("resolveServiceCommands on Linux and macOS (real files)", () => {
	test("the agent's directory first; a file without its execute bit is passed over; git from the system", () => {
		const r = root();
		const npm = join(r, "home", ".npm-global", "bin");
		touch(join(r, "early", "gemini"), 0o644);
		touch(join(npm, "gemini"));
		const env = { PATH: `${join(r, "early")}:/usr/bin:${npm}:/bin` };
		const result = resolveServiceCommands({ platform: "linux", env, uid: 1000 }, files, [
			{ what: "the ACP agent", command: "gemini", first: true },
			{ what: "git", command: "git", first: false },
		]);
		expect(result.path).toEqual([npm, join(r, "early"), "/usr/bin", "/bin"]);
		expect(result.resolved).toEqual([
			{ what: "the ACP agent", command: "gemini", at: join(npm, "gemini") },
			{ what: "git", command: "git", at: "/usr/bin/git" },
		]);
	});

	test("an agent found through fnm's per-shell link runs from the Node version's own directory", () => {
		const r = root();
		const runtime = join(r, "run", "user", "1000");
		const installation = join(r, "fnm", "node-versions", "v22.1.0", "installation");
		touch(join(installation, "bin", "gemini"));
		touch(join(installation, "bin", "node"));
		mkdirSync(join(runtime, "fnm_multishells"), { recursive: true });
		const shell = join(runtime, "fnm_multishells", "4242_1700000000000");
		symlinkSync(installation, shell);
		const env = { PATH: `${join(shell, "bin")}:/usr/bin`, XDG_RUNTIME_DIR: runtime };
		const result = resolveServiceCommands({ platform: "linux", env, uid: 1000 }, files, [
			{ what: "the ACP agent", command: "gemini", first: true },
			{ what: "git", command: "git", first: false },
		]);
		expect(result.path).toEqual([join(installation, "bin"), "/usr/bin"]);
		expect(result.resolved[0]!.at).toBe(join(installation, "bin", "gemini"));
		expect(result.dropped).toEqual([
			{ entry: join(shell, "bin"), why: "a per-shell directory of fnm (fnm_multishells)" },
		]);
	});

	test("absolute commands are taken as they are, and their directory goes first", () => {
		const r = root();
		touch(join(r, "opt", "planner", "run-planner"));
		const result = resolveServiceCommands(
			{ platform: "darwin", env: { PATH: "/usr/bin" }, uid: 501 },
			files,
			[{ what: "the Planner backend", command: join(r, "opt", "planner", "run-planner"), first: true }],
		);
		expect(result.path).toEqual([join(r, "opt", "planner"), "/usr/bin"]);
	});

	test("every command that would not resolve is named in one error, and why", () => {
		const r = root();
		const runtime = join(r, "run", "user", "1000");
		touch(join(runtime, "bin", "agent"));
		touch(join(r, "plain", "not-runnable"), 0o644);
		const env = { PATH: `${join(runtime, "bin")}:/usr/bin`, XDG_RUNTIME_DIR: runtime };
		const error = unresolved(() =>
			resolveServiceCommands({ platform: "linux", env, uid: 1000 }, files, [
				{ what: "the ACP agent", command: "agent", first: true },
				{ what: "the Planner backend", command: "./planner", first: true },
				{ what: "the Planner backend", command: join(r, "plain", "not-runnable"), first: true },
				{ what: "git", command: "no-such-git-here", first: false },
			]),
		);
		expect(error.code).toBe("service-command-unresolved");
		expect(error.message).toBe(
			`The service could not start the ACP agent \`agent\` (found at ${join(runtime, "bin", "agent")}, under the login session's runtime directory ${runtime}), the Planner backend \`./planner\` (a relative path: give its absolute path), the Planner backend \`${join(r, "plain", "not-runnable")}\` (not found), git \`no-such-git-here\` (not found on PATH): nothing was installed.`,
		);
		expect(error.hint).toContain("stays after a reboot");
	});
});

describe("resolveServiceCommands on Windows (its files mapped onto a temp dir)", () => {
	test("PATHEXT, any case of Path, absolute commands with or without their extension; no directory added", () => {
		const r = root();
		const fs = windowsFiles(r);
		touch(fs.host("C:\\Users\\ana\\AppData\\Roaming\\npm\\gemini.cmd"));
		touch(fs.host("C:\\Program Files\\Git\\cmd\\git.exe"));
		touch(fs.host("C:\\tools\\planner.exe"));
		const env = {
			Path: "C:\\Users\\ana\\AppData\\Roaming\\npm;C:\\Program Files\\Git\\cmd",
			PATHEXT: ".COM;.EXE;.BAT;.CMD",
		};
		const result = resolveServiceCommands({ platform: "win32", env, uid: -1 }, fs, [
			{ what: "the ACP agent", command: "gemini", first: true },
			{ what: "the Planner backend", command: "C:\\tools\\planner", first: true },
			{ what: "git", command: "git", first: false },
		]);
		expect(result.resolved.map((c) => c.at)).toEqual([
			"C:\\Users\\ana\\AppData\\Roaming\\npm\\gemini.CMD",
			"C:\\tools\\planner.EXE",
			"C:\\Program Files\\Git\\cmd\\git.EXE",
		]);
		expect(result.path).toEqual(["C:\\Users\\ana\\AppData\\Roaming\\npm", "C:\\Program Files\\Git\\cmd"]);
		expect(resolveCommand("win32", env, fs, "gemini.cmd", result.path)).toBe(
			"C:\\Users\\ana\\AppData\\Roaming\\npm\\gemini.cmd",
		);
	});

	test("an agent only fnm's per-shell directory has does not resolve: the task gets the user's own PATH", () => {
		const r = root();
		const fs = windowsFiles(r);
		touch(fs.host("C:\\Users\\ana\\AppData\\Local\\fnm_multishells\\1_2\\gemini.cmd"));
		touch(fs.host("C:\\Git\\cmd\\git.exe"));
		const env = { PATH: "C:\\Users\\ana\\AppData\\Local\\fnm_multishells\\1_2;C:\\Git\\cmd" };
		const error = unresolved(() =>
			resolveServiceCommands({ platform: "win32", env, uid: -1 }, fs, [
				{ what: "the ACP agent", command: "gemini", first: true },
				{ what: "git", command: "git", first: false },
			]),
		);
		expect(error.message).toContain(
			"the ACP agent `gemini` (found at C:\\Users\\ana\\AppData\\Local\\fnm_multishells\\1_2\\gemini.CMD, a per-shell directory of fnm (fnm_multishells))",
		);
		expect(error.message).not.toContain("git");
		expect(error.hint).toContain("your user's PATH");
	});
});

test("a directory is not a command, and neither is a file without its execute bit", () => {
	const r = root();
	mkdirSync(join(r, "bin", "agent"), { recursive: true });
	touch(join(r, "bin", "tool"));
	chmodSync(join(r, "bin", "tool"), 0o600);
	expect(resolveCommand("linux", {}, files, "agent", [join(r, "bin")])).toBeUndefined();
	expect(resolveCommand("linux", {}, files, "tool", [join(r, "bin")])).toBeUndefined();
});
