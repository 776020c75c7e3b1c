import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "@chopin/agent-link/clock";
import { isAlive as isLive } from "../local/process-liveness";
import { makeTempDir } from "../testing/context";
import { type BackendGroup, groupAlive, spawnGroup, windowsKillArgv } from "./process-group";

let dir: string;
const groups: BackendGroup[] = [];
afterEach(async () => {
	for (const group of groups.splice(0))
		if (group.pid && groupAlive(group.pid)) process.kill(-group.pid, "SIGKILL");
	rmSync(dir, { recursive: true, force: true });
});

async function until(check: () => boolean): Promise<void> {
	for (let i = 0; i < 500 && !check(); i++) await Bun.sleep(10);
	expect(check()).toBe(true);
}

/** Zombies (exited, never reaped in these containers) count as gone. */
function isAlive(pid: number): boolean {
	return isLive({ pid });
}

describe("spawnGroup", () => {
	test("a backend leads its own process group and its output arrives before its exit", async () => {
		dir = makeTempDir();
		let out = "";
		const group = spawnGroup({
			argv: ["sh", "-c", 'echo "pgid $(ps -o pgid= -p $$ | tr -d " ") pid $$"; echo oops >&2; exit 3'],
			cwd: dir,
			env: { PATH: process.env.PATH ?? "" },
			platform: "linux",
			clock: new ManualClock(),
			onStdout: (chunk) => {
				out += new TextDecoder().decode(chunk);
			},
			onStderr: () => {},
		});
		groups.push(group);
		expect(await group.exited).toEqual({ code: 3, signal: null });
		await group.closed;
		expect(out.trim()).toBe(`pgid ${group.pid} pid ${group.pid}`);
	});

	test("stop: SIGTERM to the group, then SIGKILL after the grace period to a grandchild that ignores it", async () => {
		dir = makeTempDir();
		const pidFile = join(dir, "grandchild.pid");
		const script = join(dir, "backend.sh");
		writeFileSync(
			script,
			`#!/bin/sh\nsh -c 'trap "" TERM; echo $$ > "${pidFile}"; while :; do sleep 1; done' &\necho ready\nwait\n`,
			{ mode: 0o755 },
		);
		const clock = new ManualClock();
		let out = "";
		const group = spawnGroup({
			argv: [script],
			cwd: dir,
			env: { PATH: process.env.PATH ?? "" },
			platform: "linux",
			clock,
			onStdout: (chunk) => {
				out += new TextDecoder().decode(chunk);
			},
			onStderr: () => {},
		});
		groups.push(group);
		await until(() => out.includes("ready") && (readFileSafe(pidFile) ?? "") !== "");
		const grandchild = Number(readFileSafe(pidFile));
		const stopped = group.stop();
		// The leader goes on SIGTERM; the grandchild ignores it and lives until the grace period ends.
		await group.exited;
		expect(isAlive(grandchild)).toBe(true);
		expect(groupAlive(group.pid!)).toBe(true);
		await clock.advance(5_000);
		await stopped;
		expect(isAlive(grandchild)).toBe(false);
		expect(groupAlive(group.pid!)).toBe(false);
	});

	test("stop of a group that ended by itself does nothing", async () => {
		dir = makeTempDir();
		const group = spawnGroup({
			argv: ["true"],
			cwd: dir,
			env: { PATH: process.env.PATH ?? "" },
			platform: "linux",
			clock: new ManualClock(),
			onStdout: () => {},
			onStderr: () => {},
		});
		await group.exited;
		await group.stop();
	});

	test("a command that cannot start exits with the reason", async () => {
		dir = makeTempDir();
		const group = spawnGroup({
			argv: [join(dir, "no-such-backend")],
			cwd: dir,
			env: { PATH: process.env.PATH ?? "" },
			platform: "linux",
			clock: new ManualClock(),
			onStdout: () => {},
			onStderr: () => {},
		});
		const exit = await group.exited;
		expect(exit.code).toBeNull();
		expect(exit.error).toContain("ENOENT");
	});

	test("on Windows the tree is ended with taskkill /T /F", () => {
		expect(windowsKillArgv(4242)).toEqual(["taskkill", "/T", "/F", "/PID", "4242"]);
	});
});

function readFileSafe(path: string): string | undefined {
	try {
		return readFileSync(path, "utf8").trim();
	} catch {
		return undefined;
	}
}
