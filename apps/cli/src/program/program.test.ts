import { afterEach, describe, expect, test } from "bun:test";
import { createTestContext, type TestContext } from "../testing/context";
import { parse, parseError } from "../testing/program";
import { buildProgram, runCli } from "./program";

let ctx: TestContext;
afterEach(() => ctx?.cleanup());

describe("the program", () => {
	test("--version and -V print the version on stdout", async () => {
		ctx = createTestContext();
		await runCli(["--version"], ctx);
		await runCli(["-V"], ctx);
		expect(ctx.stdout.text()).toBe("0.1.0\n0.1.0\n");
		expect(ctx.stderr.text()).toBe("");
	});

	test("bare chopin prints help on stdout and succeeds", async () => {
		ctx = createTestContext();
		await runCli([], ctx);
		const help = ctx.stdout.text();
		for (const command of ["connect", "run", "status", "disconnect", "logs", "workspaces", "service"])
			expect(help).toContain(`  ${command}`);
		expect(help).toContain("Examples:");
	});

	test("--help and `help <command>` succeed with help on stdout", async () => {
		ctx = createTestContext();
		expect(await parse(["--help"], ctx)).toBeUndefined();
		expect(await parse(["help", "status"], ctx)).toBeUndefined();
		expect(ctx.stdout.text()).toContain("Usage: chopin status [options]");
	});

	test("every command's --help has examples", async () => {
		ctx = createTestContext();
		const program = buildProgram(ctx);
		const leaves = program.commands.flatMap((command) =>
			command.commands.length > 0
				? command.commands.map((sub) => [command.name(), sub.name()])
				: [[command.name()]],
		);
		expect(leaves.length).toBe(12);
		for (const path of leaves) {
			const out = createTestContext();
			try {
				await runCli([...path, "--help"], out);
				expect(out.stdout.text()).toContain("Examples:\n  # ");
				expect(out.stdout.text()).toContain(`$ chopin ${path.join(" ")}`);
			} finally {
				out.cleanup();
			}
		}
	});

	test("an unknown command is a usage error (exit 2) and commander prints nothing itself", async () => {
		ctx = createTestContext();
		const error = await parseError(["conect"], ctx);
		expect(error).toMatchObject({ code: "usage", exitCode: 2 });
		expect(error.message).toBe("Unknown command 'conect'.");
		expect(error.hint).toContain("Did you mean connect?");
		expect(ctx.stderr.text()).toBe("");
	});

	test("options belong to their command: connect's flags are unknown before it", async () => {
		ctx = createTestContext();
		expect((await parseError(["--label", "x", "connect"], ctx)).code).toBe("usage");
	});

	test("help wraps to the terminal width the context reports", async () => {
		ctx = createTestContext({ tty: true });
		await runCli(["connect", "--help"], ctx);
		for (const line of ctx.stdout
			.text()
			.split("\n")
			.filter((l) => !l.includes("$ chopin"))) {
			expect(line.length).toBeLessThanOrEqual(100);
		}
	});
});
