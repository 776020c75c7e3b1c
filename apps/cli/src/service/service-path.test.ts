import { describe, expect, test } from "bun:test";
import { currentPath, droppedBecause, type PathFacts, servicePathEntries } from "./service-path";

const linux: PathFacts = { platform: "linux", env: { XDG_RUNTIME_DIR: "/run/user/1000" }, uid: 1000 };
const mac: PathFacts = { platform: "darwin", env: { TMPDIR: "/var/folders/xy/T/" }, uid: 501 };
const windows: PathFacts = {
	platform: "win32",
	env: { TEMP: "C:\\Users\\ana\\AppData\\Local\\Temp" },
	uid: -1,
};

type Case = readonly [facts: PathFacts, entry: string, dropped: string | undefined];

describe("droppedBecause: what does not last until the service starts", () => {
	const cases: Case[] = [
		// [facts, entry, dropped?]
		[linux, "/usr/local/bin", undefined],
		[linux, "/home/ana/.local/bin", undefined],
		[linux, "/home/ana/.nvm/versions/node/v20.11.0/bin", undefined],
		[linux, "/home/ana/.local/share/fnm/aliases/default/bin", undefined],
		[linux, "/home/ana/.volta/bin", undefined],
		[linux, "/home/ana/.asdf/shims", undefined],
		[linux, "/run/wrappers/bin", undefined],
		[linux, "", "empty"],
		[linux, "   ", "empty"],
		[linux, "bin", "relative"],
		[linux, "./node_modules/.bin", "relative"],
		[linux, "/run/user/1000/fnm_multishells/4242_1700000000000/bin", "fnm"],
		[linux, "/home/ana/.local/state/fnm_multishells/4242_1700000000000/bin", "fnm"],
		[linux, "/home/ana/.version-fox/temp/1717106400-28636/nodejs/bin", "vfox"],
		[linux, "/home/ana/.version-fox/sdks/nodejs/bin", undefined],
		[linux, "/run/user/1000/bin", "runtime directory /run/user/1000"],
		[linux, "/run/user/1000", "runtime directory /run/user/1000"],
		[linux, "/run/user/10000/bin", undefined],
		[{ ...linux, env: { XDG_RUNTIME_DIR: "/var/run/u1000" } }, "/var/run/u1000/x", "/var/run/u1000"],
		[{ ...linux, env: {} }, "/run/user/1000/x", "runtime directory /run/user/1000"],
		[linux, "/tmp/bun-node-af24e281", "temporary directory /tmp"],
		[linux, "/tmpfoo/bin", undefined],
		[mac, "/Users/ana/Library/Caches/fnm_multishells/123_456/bin", "fnm"],
		[mac, "/var/folders/xy/T/bun-node-1/bin", "temporary directory /var/folders/xy/T/"],
		[mac, "/opt/homebrew/bin", undefined],
		[windows, "C:\\Users\\ana\\AppData\\Local\\fnm_multishells\\1_2", "fnm"],
		[windows, "c:\\users\\ana\\appdata\\local\\FNM_MULTISHELLS\\1_2", "fnm"],
		[windows, "C:\\Users\\ana\\AppData\\Local\\Temp\\bunx", "temporary directory"],
		[windows, "C:\\Program Files\\Git\\cmd", undefined],
		[windows, "\\\\server\\tools", undefined],
		[windows, "tools", "relative"],
		[windows, "\\tools", "relative"],
	];
	test.each(cases.map(([facts, entry, reason]) => [entry, facts.platform, facts, reason] as const))(
		"%p on %s",
		(entry, _platform, facts, reason) => {
			const why = droppedBecause(entry, facts);
			if (reason === undefined) expect(why).toBeUndefined();
			else expect(why).toContain(reason);
		},
	);
});

describe("servicePathEntries", () => {
	test("the agent's and Planner's directories first, then PATH in order, once each, without what does not last", () => {
		const path = [
			"/run/user/1000/fnm_multishells/4242_1/bin",
			"/home/ana/.local/bin",
			"",
			"/usr/local/bin",
			"/usr/bin",
			"bin",
			"/usr/local/bin/",
			"/home/ana/.npm-global/bin",
			"/tmp/bun-node-1",
			"/usr/bin",
		].join(":");
		const { entries, dropped } = servicePathEntries(linux, path, [
			"/home/ana/.npm-global/bin",
			"/home/ana/.local/share/fnm/node-versions/v22.1.0/installation/bin",
		]);
		expect(entries).toEqual([
			"/home/ana/.npm-global/bin",
			"/home/ana/.local/share/fnm/node-versions/v22.1.0/installation/bin",
			"/home/ana/.local/bin",
			"/usr/local/bin",
			"/usr/bin",
		]);
		expect(dropped.map((d) => d.entry)).toEqual([
			"/run/user/1000/fnm_multishells/4242_1/bin",
			"",
			"bin",
			"/tmp/bun-node-1",
		]);
	});

	test("Windows: `;`, any case of Path, duplicates compared without case or slash direction", () => {
		const env = { Path: "C:\\Windows\\system32;c:\\windows\\System32\\;C:/Windows/system32;C:\\Tools" };
		expect(currentPath("win32", env)).toBe(env.Path);
		const { entries } = servicePathEntries({ ...windows, env }, currentPath("win32", env));
		expect(entries).toEqual(["C:\\Windows\\system32", "C:\\Tools"]);
		expect(servicePathEntries(windows, "C:\\;D:\\bin\\").entries).toEqual(["C:\\", "D:\\bin"]);
	});

	test("no PATH at all: only the directories given first", () => {
		expect(servicePathEntries(linux, undefined, ["/opt/agent/bin"]).entries).toEqual(["/opt/agent/bin"]);
		expect(servicePathEntries(linux, "", []).entries).toEqual([]);
	});
});
