import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { identify, isAlive } from "./process-liveness";

function procState(pid: number): string | undefined {
	try {
		const text = readFileSync(`/proc/${pid}/stat`, "utf8");
		return text.slice(text.lastIndexOf(")") + 2).split(" ")[0];
	} catch {
		return undefined;
	}
}

describe("isAlive", () => {
	test("this process is alive, with its start time", () => {
		const me = identify(process.pid);
		expect(isAlive(me)).toBe(true);
		if (process.platform === "linux") expect(me.startTime).toMatch(/^\d+$/);
	});

	test("a process that exited and was reaped is gone", async () => {
		const child = Bun.spawn(["true"]);
		await child.exited;
		expect(isAlive({ pid: child.pid })).toBe(false);
	});

	test("nonsense pids are gone", () => {
		expect(isAlive({ pid: 0 })).toBe(false);
		expect(isAlive({ pid: -1 })).toBe(false);
		expect(isAlive({ pid: 1.5 })).toBe(false);
	});

	test("a reused pid (another start time) is gone", () => {
		if (process.platform !== "linux") return;
		expect(isAlive({ pid: process.pid, startTime: "1" })).toBe(false);
	});

	test.skipIf(process.platform !== "linux" || !Bun.which("perl"))("a zombie counts as gone", async () => {
		// perl forks a child that exits at once and never reaps it: a zombie.
		const script = 'my $p = fork(); if ($p == 0) { exit 0 } $| = 1; print "$p\\n"; sleep 30';
		const child = Bun.spawn(["perl", "-e", script], { stdout: "pipe" });
		try {
			const reader = child.stdout.getReader();
			const { value } = await reader.read();
			reader.releaseLock();
			const zombie = Number(new TextDecoder().decode(value).trim());
			// Wait for the event (the child becoming a zombie), not for a duration.
			while (procState(zombie) !== "Z") await Bun.sleep(5);
			expect(isAlive({ pid: zombie })).toBe(false);
			expect(isAlive({ pid: child.pid })).toBe(true);
		} finally {
			child.kill("SIGKILL");
			await child.exited;
		}
	});
});
