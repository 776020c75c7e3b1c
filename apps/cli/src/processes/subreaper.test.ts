// The child subreaper through bun:ffi, and the rule that keeps Bun alive: a pid Bun spawned is never reaped by us.
import { afterEach, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import {
	addOwnChild,
	adoptedOrphans,
	isChildSubreaper,
	reapAdopted,
	removeOwnChild,
	setChildSubreaper,
} from "./subreaper";

const children: Subprocess[] = [];
afterEach(async () => {
	setChildSubreaper(false);
	for (const child of children.splice(0)) {
		child.kill("SIGKILL");
		await child.exited;
		removeOwnChild(child.pid);
	}
});

describe("the child subreaper", () => {
	test("prctl sets and clears it, and the kernel says so", () => {
		expect(isChildSubreaper()).toBe(false);
		expect(setChildSubreaper(true)).toBe(true);
		expect(isChildSubreaper()).toBe(true);
		expect(setChildSubreaper(false)).toBe(true);
		expect(isChildSubreaper()).toBe(false);
	});

	test("a detached child Bun spawned is no adopted orphan once registered, and is never reaped by us", async () => {
		const child = Bun.spawn(["sleep", "30"], { detached: true, stdio: ["ignore", "ignore", "ignore"] });
		children.push(child);
		// In a session of its own and this process's child: by its looks, an adopted orphan. Hence the registry.
		expect(adoptedOrphans().map((p) => p.pid)).toContain(child.pid);
		addOwnChild(child.pid);
		expect(adoptedOrphans().map((p) => p.pid)).not.toContain(child.pid);
		child.kill("SIGKILL");
		for (let i = 0; i < 100; i++) {
			expect(reapAdopted([child.pid])).toEqual([]);
			await Bun.sleep(2);
		}
		// Bun still gets its own child's status: nothing took it (a stolen one crashes Bun with ECHILD).
		expect(await child.exited).toBe(137);
	});
});
