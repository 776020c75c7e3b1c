import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const MAIN = join(import.meta.dir, "main.ts");

let cwd: string;
beforeEach(() => {
	// An empty working directory: no .env file for Bun to load, and .data lands here.
	cwd = mkdtempSync(join(tmpdir(), "chopin-main-"));
});
afterEach(() => {
	rmSync(cwd, { recursive: true, force: true });
});

/** The environment without anything Chopin reads, so the parent's settings do not leak in. */
function cleanEnv(extra: Record<string, string>): Record<string, string> {
	const env: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? cwd };
	return { ...env, ...extra };
}

async function run(env: Record<string, string>) {
	const child = Bun.spawn(["bun", MAIN], { cwd, env: cleanEnv(env), stdout: "pipe", stderr: "pipe" });
	const [stdout, stderr, code] = await Promise.all([
		new Response(child.stdout).text(),
		new Response(child.stderr).text(),
		child.exited,
	]);
	return { stdout, stderr, code };
}

describe("bun apps/server/src/main.ts", () => {
	test("a bad variable prints exactly one line naming it and exits 2", async () => {
		const { stdout, stderr, code } = await run({ PORT: "abc" });
		expect(code).toBe(2);
		expect(stdout).toBe("");
		expect(stderr).toBe('PORT must be an integer from 0 to 65535 (got "abc").\n');
	});

	test("a missing LOCAL_ACCOUNTS file is one line and exit 2 too", async () => {
		const { stdout, stderr, code } = await run({ LOCAL_ACCOUNTS: "@nope.json" });
		expect(code).toBe(2);
		expect(stdout).toBe("");
		expect(stderr.trimEnd().split("\n")).toEqual([
			`LOCAL_ACCOUNTS names a file that cannot be read: ${join(cwd, "nope.json")} (ENOENT).`,
		]);
	});

	test("an unreachable database is one line and exit 1, with no password", async () => {
		const { stderr, code } = await run({
			DATABASE_URL: "postgres://chopin:hunter2@127.0.0.1:1/chopin",
			LOG_LEVEL: "silent",
		});
		expect(code).toBe(1);
		expect(stderr.trimEnd().split("\n")).toHaveLength(1);
		expect(stderr).toContain("Could not connect to PostgreSQL");
		expect(stderr).not.toContain("hunter2");
	});

	test("starts, says where it runs, serves, and stops cleanly on SIGTERM", async () => {
		const child = Bun.spawn(["bun", MAIN], {
			cwd,
			env: cleanEnv({ PORT: "0", LOG_LEVEL: "warn" }),
			stdout: "pipe",
			stderr: "pipe",
		});
		try {
			const reader = child.stdout.getReader();
			let out = "";
			while (!out.includes("\n")) {
				const { value, done } = await reader.read();
				if (done) break;
				out += new TextDecoder().decode(value);
			}
			reader.releaseLock();
			const match = /^Chopin is running at (http:\/\/localhost:(\d+))\n$/.exec(out);
			expect(match).not.toBeNull();
			const health = await fetch(`http://127.0.0.1:${match![2]}/healthz`);
			expect(await health.json()).toMatchObject({ ok: true, store: "sqlite" });
			child.kill("SIGTERM");
			expect(await child.exited).toBe(0);
			expect(await new Response(child.stderr).text()).toBe("");
		} finally {
			if (child.exitCode === null) child.kill("SIGKILL");
		}
	}, 30_000);
});
