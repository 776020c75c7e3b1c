import { afterEach, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { runCli } from "../program/program";
import { createTestContext, type TestContext } from "../testing/context";
import { parse, parseError } from "../testing/program";
import { FOLLOW_POLL_MS, runLogs } from "./logs";

let ctx: TestContext;
afterEach(() => ctx?.cleanup());

const entry = (n: number, level = 30) =>
	`${JSON.stringify({ level, time: `2026-01-01T00:00:${String(n % 60).padStart(2, "0")}.000Z`, pid: 1, msg: `line ${n}` })}\n`;

function writeLog(lines: number[]): void {
	mkdirSync(ctx.paths.logDir, { recursive: true });
	writeFileSync(ctx.paths.logFile, lines.map((n) => entry(n)).join(""));
}

describe("logs: parse half", () => {
	test("defaults and flags", async () => {
		ctx = createTestContext();
		expect(await parse(["logs"], ctx)).toEqual({
			command: "logs",
			options: { follow: false, lines: 100, json: false },
		});
		expect(await parse(["logs", "-f", "-n", "5", "--json"], ctx)).toEqual({
			command: "logs",
			options: { follow: true, lines: 5, json: true },
		});
		expect(await parse(["logs", "--follow", "--lines=0"], ctx)).toMatchObject({
			options: { follow: true, lines: 0 },
		});
	});

	test.each([
		[["-n", "abc"], "--lines must be a number."],
		[["-n", "1.5"], "--lines must be a whole number."],
		[["-n", "-1"], "--lines must be 0 or more."],
	])("%j is refused: %s", async (argv, message) => {
		ctx = createTestContext();
		const error = await parseError(["logs", ...argv], ctx);
		expect(error).toMatchObject({ code: "option-invalid", message, exitCode: 2 });
	});

	test("--help has examples", async () => {
		ctx = createTestContext();
		await parse(["logs", "--help"], ctx);
		expect(ctx.stdout.text()).toContain("$ chopin logs -f");
	});
});

describe("logs: run half", () => {
	test("no log yet: a note on stderr, nothing on stdout, success", async () => {
		ctx = createTestContext();
		await runCli(["logs"], ctx);
		expect(ctx.stdout.text()).toBe("");
		expect(ctx.stderr.text()).toBe(`No log yet at ${ctx.paths.logFile}.\n`);
	});

	test("prints the last N lines readably, or as raw JSON", async () => {
		ctx = createTestContext();
		writeLog([1, 2, 3, 4, 5]);
		await runCli(["logs", "-n", "2"], ctx);
		expect(ctx.stdout.text()).toBe("00:00:04 INFO  line 4\n00:00:05 INFO  line 5\n");
		await runCli(["logs", "-n", "1", "--json"], ctx);
		expect(ctx.stdout.text()).toEndWith(entry(5));
	});

	test("-f follows new lines, across a rotation, on the injected clock, until interrupted", async () => {
		ctx = createTestContext();
		writeLog([1, 2]);
		const following = runLogs({ follow: true, lines: 1, json: true }, ctx);
		const done = following.catch((error) => error);
		expect(ctx.stdout.text()).toBe(entry(2));

		appendFileSync(ctx.paths.logFile, entry(3) + entry(4).slice(0, 10));
		await ctx.clock.advance(FOLLOW_POLL_MS);
		expect(ctx.stdout.text()).toBe(entry(2) + entry(3)); // the half-written line waits

		appendFileSync(ctx.paths.logFile, entry(4).slice(10));
		await ctx.clock.advance(FOLLOW_POLL_MS);
		expect(ctx.stdout.text()).toBe(entry(2) + entry(3) + entry(4));

		// Rotation: the file moves to .1 and a new one starts.
		renameSync(ctx.paths.logFile, `${ctx.paths.logFile}.1`);
		writeFileSync(ctx.paths.logFile, entry(5));
		await ctx.clock.advance(FOLLOW_POLL_MS);
		expect(ctx.stdout.text()).toBe(entry(2) + entry(3) + entry(4) + entry(5));

		ctx.controller.abort();
		const error = await done;
		expect(error).toMatchObject({ code: "interrupted", exitCode: 130 });
	});

	test("-f before any log exists waits for the file", async () => {
		ctx = createTestContext();
		const done = runLogs({ follow: true, lines: 100, json: false }, ctx).catch((error) => error);
		await ctx.clock.advance(FOLLOW_POLL_MS);
		writeLog([7]);
		await ctx.clock.advance(FOLLOW_POLL_MS);
		expect(ctx.stdout.text()).toBe("00:00:07 INFO  line 7\n");
		ctx.controller.abort();
		expect((await done).code).toBe("interrupted");
	});
});
