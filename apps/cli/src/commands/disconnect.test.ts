import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { saveCredential } from "../machine/credential";
import { runCli } from "../program/program";
import { closedOrigin } from "../testing/closed-port";
import { createTestContext, type TestContext } from "../testing/context";
import { sampleCredential, TOKEN } from "../testing/credential";
import { parse, parseError } from "../testing/program";

let ctx: TestContext;
afterEach(() => ctx?.cleanup());

describe("disconnect", () => {
	test("parse half: no options", async () => {
		ctx = createTestContext();
		expect(await parse(["disconnect"], ctx)).toEqual({ command: "disconnect", options: {} });
		expect((await parseError(["disconnect", "--force"], ctx)).code).toBe("usage");
	});

	test("--help has an example and says it is idempotent", async () => {
		ctx = createTestContext();
		await parse(["disconnect", "--help"], ctx);
		expect(ctx.stdout.text()).toContain("$ chopin disconnect");
		expect(ctx.stdout.text()).toContain("does nothing and succeeds");
	});

	test("not paired: nothing to do, success, twice", async () => {
		ctx = createTestContext();
		await runCli(["disconnect"], ctx);
		await runCli(["disconnect"], ctx);
		expect(ctx.stderr.text()).toBe("This machine is not paired; there is nothing to disconnect.\n".repeat(2));
		expect(ctx.stdout.text()).toBe("");
	});

	test("paired, the server unreachable: the credential goes anyway, with a warning (exit 0)", async () => {
		ctx = createTestContext();
		const server = closedOrigin();
		saveCredential(ctx, sampleCredential({ server }));
		await runCli(["disconnect"], ctx);
		expect(existsSync(ctx.paths.credentialFile)).toBe(false);
		const err = ctx.stderr.text();
		expect(err).toContain(`warning: could not reach ${server} to revoke this machine`);
		expect(err).toContain("Machines page");
		expect(err).toContain(`Deleted the credential ${ctx.paths.credentialFile}`);
		expect(`${ctx.stdout.text()}${err}`).not.toContain(TOKEN);
		await runCli(["disconnect"], ctx);
		expect(ctx.stderr.text()).toEndWith("This machine is not paired; there is nothing to disconnect.\n");
	});

	test("a damaged credential file is deleted with a warning: the server cannot be asked without it", async () => {
		ctx = createTestContext();
		saveCredential(ctx, sampleCredential({ server: closedOrigin() }));
		writeFileSync(ctx.paths.credentialFile, "{");
		await runCli(["disconnect"], ctx);
		expect(existsSync(ctx.paths.credentialFile)).toBe(false);
		expect(ctx.stderr.text()).toContain("Deleted it without revoking the machine");
	});
});
