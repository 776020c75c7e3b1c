// The process table from /proc and from ps agree on this machine; a command name with spaces and parentheses parses.
import { afterEach, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import {
	hasEnvironmentEntry,
	namespacePid,
	parsePs,
	parseStat,
	readProcess,
	readProcessTable,
} from "./process-table";

const children: Subprocess[] = [];
afterEach(async () => {
	for (const child of children.splice(0)) {
		child.kill("SIGKILL");
		await child.exited;
	}
});

describe("the process table", () => {
	test("a stat line whose command holds spaces and a parenthesis", () => {
		const line = "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 987654 0 0";
		expect(parseStat(4242, line)).toEqual({
			pid: 4242,
			state: "S",
			ppid: 1,
			pgid: 4242,
			sid: 4242,
			startTime: 987654,
		});
		expect(parseStat(1, "garbage")).toBeUndefined();
	});

	test("/proc and ps say the same of this process", () => {
		const proc = readProcessTable("linux")!.find((p) => p.pid === process.pid)!;
		expect(proc).toMatchObject({ pid: process.pid, ppid: process.ppid, state: expect.any(String) });
		expect(proc.startTime).toBeGreaterThan(0);
		const ps = readProcessTable("darwin")!.find((p) => p.pid === process.pid)!;
		expect(ps).toMatchObject({ pid: proc.pid, ppid: proc.ppid, pgid: proc.pgid });
		expect(readProcessTable("win32")).toBeUndefined();
		expect(parsePs("  12    1   12 Ss\n 13 12 12 R+\n\n")).toMatchObject([
			{ pid: 12, ppid: 1, pgid: 12, state: "S" },
			{ pid: 13, ppid: 12, pgid: 12, state: "R" },
		]);
	});

	test("a process's environment entry, and its pid in its own PID namespace", async () => {
		const child = Bun.spawn(["sleep", "30"], { env: { PATH: process.env.PATH ?? "", MARK: "yes-1" } });
		children.push(child);
		// Until it has exec'd, the child is a copy of this process with this process's environment.
		for (let i = 0; i < 500 && !hasEnvironmentEntry(child.pid, "MARK=yes-1"); i++) await Bun.sleep(10);
		expect(hasEnvironmentEntry(child.pid, "MARK=yes-1")).toBe(true);
		expect(hasEnvironmentEntry(child.pid, "MARK=yes")).toBe(false);
		expect(hasEnvironmentEntry(999_999_999, "MARK=yes-1")).toBe(false);
		expect(namespacePid(child.pid)).toBe(child.pid);
		expect(readProcess(child.pid)?.ppid).toBe(process.pid);
	});
});
