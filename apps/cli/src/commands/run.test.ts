import { afterEach, describe, expect, test } from "bun:test";
import { runCli } from "../program/program";
import { createTestContext, type TestContext } from "../testing/context";
import { parse, parseError } from "../testing/program";

let ctx: TestContext;
afterEach(() => ctx?.cleanup());

describe("run", () => {
	test("parse half: no options, no arguments", async () => {
		ctx = createTestContext();
		expect(await parse(["run"], ctx)).toEqual({ command: "run", options: {} });
		expect((await parseError(["run", "extra"], ctx)).code).toBe("usage");
		expect((await parseError(["run", "--foreground"], ctx)).code).toBe("usage");
	});

	test("--help has examples", async () => {
		ctx = createTestContext();
		await parse(["run", "--help"], ctx);
		expect(ctx.stdout.text()).toContain("Examples:");
		expect(ctx.stdout.text()).toContain("$ chopin run");
	});

	test("run half: not paired, it starts nothing and says so (exit 3)", async () => {
		ctx = createTestContext();
		const error = await runCli(["run"], ctx).catch((e) => e);
		expect(error).toMatchObject({ code: "not-paired", exitCode: 3 });
		expect(error.hint).toContain("chopin connect");
	});
});
