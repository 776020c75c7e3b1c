import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { saveCredential } from "../credential";
import { runCli } from "../program";
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

	test("paired: revocation is not built yet, so it says so and keeps the credential", async () => {
		ctx = createTestContext();
		saveCredential(ctx, sampleCredential());
		const error = await runCli(["disconnect"], ctx).catch((e) => e);
		expect(error).toMatchObject({ code: "not-implemented", exitCode: 1 });
		expect(existsSync(ctx.paths.credentialFile)).toBe(true);
		expect(`${error.message}${error.hint}${ctx.stdout.text()}${ctx.stderr.text()}`).not.toContain(TOKEN);
	});
});
