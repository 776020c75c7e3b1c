import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { makeTempDir } from "../testing/context";
import { git, makeRepo } from "../testing/git";
import { CheckoutGate, gateKey } from "./gate";
import { createRunWorkspace } from "./run-workspace";
import { syncWorkspace } from "./sync";

let dir = "";
afterEach(() => {
	if (dir) rmSync(dir, { recursive: true, force: true });
	dir = "";
});

/** A writer that records when it starts and ends, and finishes only when released. */
function writer(log: string[], name: string) {
	let release!: () => void;
	const done = new Promise<void>((resolve) => {
		release = resolve;
	});
	return {
		release: () => release(),
		write: async () => {
			log.push(`${name} start`);
			await done;
			log.push(`${name} end`);
			return name;
		},
	};
}

/** The real gate, counting how many writers hold one repository's turn at once. */
class CountingGate extends CheckoutGate {
	holding = 0;
	most = 0;
	turns = 0;
	override run<T>(repository: string, write: () => Promise<T>): Promise<T> {
		return super.run(repository, async () => {
			this.holding += 1;
			this.turns += 1;
			this.most = Math.max(this.most, this.holding);
			try {
				return await write();
			} finally {
				this.holding -= 1;
			}
		});
	}
}

describe("CheckoutGate", () => {
	test("two concurrent writers of one repository take turns; another repository does not wait", async () => {
		const gate = new CheckoutGate();
		const log: string[] = [];
		const a = writer(log, "a");
		const b = writer(log, "b");
		const c = writer(log, "c");
		const first = gate.run("/repo/.git", a.write);
		const second = gate.run("/repo/.git", b.write);
		const elsewhere = gate.run("/other/.git", c.write);
		await Bun.sleep(0);
		expect(log).toEqual(["a start", "c start"]);
		expect(gate.busy("/repo/.git")).toBe(true);
		b.release();
		c.release();
		expect(await elsewhere).toBe("c");
		expect(log).toEqual(["a start", "c start", "c end"]);
		a.release();
		expect(await first).toBe("a");
		expect(await second).toBe("b");
		expect(log).toEqual(["a start", "c start", "c end", "a end", "b start", "b end"]);
		expect(gate.busy("/repo/.git")).toBe(false);
	});

	test("a writer that fails hands the turn on; its error is the caller's", async () => {
		const gate = new CheckoutGate();
		const failing = gate.run("/repo/.git", async () => {
			throw new Error("boom");
		});
		const next = gate.run("/repo/.git", async () => "next");
		await expect(failing).rejects.toThrow("boom");
		expect(await next).toBe("next");
	});

	test("every spelling of a path is one key: through a symlink, with `..`, not made yet", () => {
		dir = makeTempDir();
		mkdirSync(join(dir, "repo", ".git"), { recursive: true });
		symlinkSync(join(dir, "repo"), join(dir, "link"));
		const key = gateKey(join(dir, "repo", ".git"));
		expect(gateKey(join(dir, "link", ".git"))).toBe(key);
		expect(gateKey(join(dir, "repo", "sub", "..", ".git"))).toBe(key);
		expect(gateKey(join(dir, "link", "later"))).toBe(gateKey(join(dir, "repo", "later")));
	});

	test("real git: workspaces made and synced at once on one checkout all succeed, one at a time", async () => {
		dir = makeTempDir();
		const deps = { spawn: execa, env: { PATH: process.env.PATH, GIT_CONFIG_GLOBAL: "/dev/null", HOME: dir } };
		const checkout = await makeRepo(join(dir, "score"));
		const base = await git(checkout, "rev-parse", "HEAD");
		const gate = new CountingGate();
		const ids = ["a", "b", "c", "d", "e", "f"].map((letter) => `run_${letter.repeat(16)}`);
		const made = await Promise.all(
			ids.map((runId) =>
				createRunWorkspace(deps, gate, { stateDir: join(dir, "state"), runId, checkout, base }),
			),
		);
		for (const ws of made) {
			await git(ws.path, "commit", "--quiet", "--allow-empty", "-m", `work in ${ws.branch}`);
		}
		await Promise.all(
			made.map((ws, i) =>
				syncWorkspace(deps, gate, { checkout, workspace: ws.path, scope: { kind: "run", id: ids[i]! } }),
			),
		);
		const keep = await git(checkout, "for-each-ref", "--format=%(refname)", "refs/chopin/keep/run");
		expect(keep.split("\n")).toEqual(ids.map((id) => `refs/chopin/keep/run/${id}`));
		const synced = await git(checkout, "for-each-ref", "--format=%(refname)", "refs/remotes/chopin");
		expect(synced.split("\n")).toEqual(ids.map((id) => `refs/remotes/chopin/${id}/chopin/${id}`));
		// Six keep refs and six syncs, each in its own turn.
		expect(gate.turns).toBe(12);
		expect(gate.most).toBe(1);
		expect(gate.busy(join(checkout, ".git"))).toBe(false);
	});
});
