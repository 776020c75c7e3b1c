import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { statusReportSchema } from "../status/status-report-schema";
import { runCliProcess } from "../testing/cli-process";
import { createTestContext, type TestContext } from "../testing/context";
import { parse } from "../testing/program";
import { pairForStatus } from "../testing/status";
import { runCli } from "./program";
import { findShortcut, SHORTCUTS } from "./shortcuts";

let ctx: TestContext;
afterEach(() => ctx?.cleanup());

describe("shortcuts", () => {
	test("each is exactly what the command tree parses the same words into", async () => {
		for (const shortcut of SHORTCUTS) {
			ctx = createTestContext();
			expect(await parse([...shortcut.argv], ctx)).toEqual({
				command: shortcut.command,
				options: shortcut.options,
			});
			ctx.cleanup();
		}
	});

	test("only the exact words are shortcuts: help, typos and anything more go through the command tree", () => {
		expect(findShortcut(["status"])?.options).toEqual({ json: false });
		expect(findShortcut(["status", "--json"])?.options).toEqual({ json: true });
		for (const argv of [
			["status", "--help"],
			["status", "--json", "--json"],
			["--json", "status"],
			["status", "--jsn"],
			["status", "extra"],
			["Status"],
			["status", "--json=true"],
			[],
		])
			expect({ argv, shortcut: findShortcut(argv) }).toEqual({ argv, shortcut: undefined });
	});

	test("the real process prints through the shortcut what the command tree prints", async () => {
		ctx = createTestContext();
		pairForStatus(ctx);
		const env = {
			PATH: process.env.PATH ?? "",
			HOME: join(ctx.root, "home"),
			CHOPIN_STATE_DIR: ctx.paths.stateDir,
			CHOPIN_CONFIG_DIR: ctx.paths.configDir,
		};
		for (const argv of [["status"], ["status", "--json"]]) {
			// First the shortcut, in a real process: it checks the files in full and records them.
			const { stdout, stderr, code } = await runCliProcess(argv, env);
			// Then the command tree, in this process, reading the recorded files.
			const tree = createTestContext({ env });
			try {
				const error = await runCli(argv, tree).then(
					() => undefined,
					(thrown) => thrown,
				);
				expect({ stdout, code }).toEqual({ stdout: tree.stdout.text(), code: error?.exitCode ?? 0 });
				expect(stderr).toBe(`error: ${error.message}\nhint: ${error.hint}\n`);
			} finally {
				tree.cleanup();
			}
		}
	});

	test("not paired, its directories found through HOME: the shortcut prints what the command tree prints", async () => {
		ctx = createTestContext();
		const home = join(ctx.root, "home");
		const state = join(home, ".local", "share", "chopin");
		const config = join(home, ".config", "chopin");
		// No CHOPIN_* or XDG_* variable: the directories are chopin's defaults under HOME, as a user's are.
		const { stdout, stderr, code } = await runCliProcess(["status", "--json"], {
			PATH: process.env.PATH ?? "",
			HOME: home,
		});
		const report = statusReportSchema.parse(JSON.parse(stdout));
		expect(report.logFile).toBe(join(state, "logs", "chopin.log"));
		expect(report.config).toEqual({ configured: false, file: join(config, "machine.json") });
		const tree = createTestContext({
			env: { HOME: home, CHOPIN_STATE_DIR: state, CHOPIN_CONFIG_DIR: config },
		});
		try {
			const error = await runCli(["status", "--json"], tree).then(
				() => undefined,
				(thrown) => thrown,
			);
			expect({ stdout, code }).toEqual({ stdout: tree.stdout.text(), code: 3 });
			expect(stderr).toBe(`error: ${error.message}\nhint: ${error.hint}\n`);
		} finally {
			tree.cleanup();
		}
	});
});
