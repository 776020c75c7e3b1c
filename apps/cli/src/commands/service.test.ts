import { afterEach, describe, expect, test } from "bun:test";
import { runCli } from "../program/program";
import { createTestContext, type TestContext } from "../testing/context";
import { parse, parseError } from "../testing/program";

let ctx: TestContext;
afterEach(() => ctx?.cleanup());

describe("service", () => {
	test.each(["install", "status", "uninstall"])("service %s parses to its own run half", async (sub) => {
		ctx = createTestContext();
		expect(await parse(["service", sub], ctx)).toEqual({ command: `service ${sub}`, options: {} });
		expect((await parseError(["service", sub, "extra"], ctx)).code).toBe("usage");
	});

	test.each(["install", "status", "uninstall"])("service %s --help has an example", async (sub) => {
		ctx = createTestContext();
		await parse(["service", sub, "--help"], ctx);
		expect(ctx.stdout.text()).toContain(`$ chopin service ${sub}`);
	});

	test("the group alone prints its help and is a usage error", async () => {
		ctx = createTestContext();
		const error = await parseError(["service"], ctx);
		expect(error).toMatchObject({
			code: "usage",
			exitCode: 2,
			message: "`chopin service` needs a subcommand.",
		});
		expect(ctx.stderr.text()).toContain("install");
		expect(ctx.stderr.text()).toContain("uninstall");
	});

	test("an unknown subcommand is a usage error", async () => {
		ctx = createTestContext();
		const error = await parseError(["service", "restart"], ctx);
		expect(error.code).toBe("usage");
		expect(error.hint).toContain("chopin service --help");
	});

	test.each(["install", "status", "uninstall"])("service %s run half: not built yet", async (sub) => {
		ctx = createTestContext();
		const error = await runCli(["service", sub], ctx).catch((e) => e);
		expect(error).toMatchObject({ code: "not-implemented", exitCode: 1 });
	});
});
