import { afterEach, describe, expect, test } from "bun:test";
import { type Runners, runCli } from "../program/program";
import { serviceStatusSchema } from "../service/status-schema";
import { createTestContext, type TestContext } from "../testing/context";
import { parse, parseError } from "../testing/program";
import { recordingRunner, serviceTestDeps } from "../testing/service";
import { runServiceInstall } from "./service/install";
import { runServiceStatus } from "./service/status";
import { runServiceUninstall } from "./service/uninstall";

let ctx: TestContext;
afterEach(() => ctx?.cleanup());

describe("service", () => {
	test.each([
		["install", {}],
		["status", { json: false }],
		["uninstall", {}],
	])("service %s parses to its own run half", async (sub, options) => {
		ctx = createTestContext();
		expect(await parse(["service", sub], ctx)).toEqual({ command: `service ${sub}`, options });
		expect((await parseError(["service", sub, "extra"], ctx)).code).toBe("usage");
	});

	test("service status --json", async () => {
		ctx = createTestContext();
		expect(await parse(["service", "status", "--json"], ctx)).toEqual({
			command: "service status",
			options: { json: true },
		});
		expect((await parseError(["service", "install", "--json"], ctx)).code).toBe("usage");
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

	test("the run halves, through the command tree, on the service code (the manager's commands answered)", async () => {
		ctx = createTestContext();
		const runner = recordingRunner();
		const deps = serviceTestDeps(ctx, runner);
		const runners: Runners = {
			service: {
				install: (options, c) => runServiceInstall(options, c, deps),
				status: (options, c) => runServiceStatus(options, c, deps),
				uninstall: (options, c) => runServiceUninstall(options, c, deps),
			},
		};
		// Not paired: there is nothing for a service to serve.
		expect(await runCli(["service", "install"], ctx, runners).catch((e) => e)).toMatchObject({
			code: "not-paired",
			exitCode: 3,
		});
		await runCli(["service", "uninstall"], ctx, runners);
		expect(ctx.stderr.text()).toBe("The chopin service is not installed: there is nothing to remove.\n");
		await runCli(["service", "status", "--json"], ctx, runners);
		const status = serviceStatusSchema.parse(JSON.parse(ctx.stdout.text()));
		expect(status).toMatchObject({ state: "not-installed", manager: "systemd" });
		expect(runner.calls).toEqual([]);
	});
});
