import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { CliError } from "../program/errors";
import { createTestContext, type TestContext } from "../testing/context";
import { sampleCredential, TOKEN } from "../testing/credential";
import { deleteCredential, loadCredential, requireCredential, saveCredential } from "./credential";

let ctx: TestContext;
afterEach(() => ctx?.cleanup());

describe("the credential store", () => {
	test("saves at 0600 in a 0700 state dir, atomically, and loads it back", () => {
		ctx = createTestContext();
		saveCredential(ctx, sampleCredential());
		const file = ctx.paths.credentialFile;
		expect(statSync(file).mode & 0o777).toBe(0o600);
		expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
		expect(readdirSync(dirname(file))).toEqual(["credential.json"]);
		expect(loadCredential(ctx)).toEqual(sampleCredential());
		expect(requireCredential(ctx)).toEqual(sampleCredential());
	});

	test("nothing stored: load is undefined, require is not-paired (exit 3)", () => {
		ctx = createTestContext();
		expect(loadCredential(ctx)).toBeUndefined();
		try {
			requireCredential(ctx);
			throw new Error("expected not-paired");
		} catch (error) {
			expect(error).toBeInstanceOf(CliError);
			expect(error).toMatchObject({ code: "not-paired", exitCode: 3, hint: "Run `chopin connect` first." });
		}
	});

	test("delete is idempotent", () => {
		ctx = createTestContext();
		saveCredential(ctx, sampleCredential());
		expect(deleteCredential(ctx)).toBe(true);
		expect(existsSync(ctx.paths.credentialFile)).toBe(false);
		expect(deleteCredential(ctx)).toBe(false);
	});

	test("saving replaces the stored credential", () => {
		ctx = createTestContext();
		saveCredential(ctx, sampleCredential());
		saveCredential(ctx, sampleCredential({ machineId: "mch_456" }));
		expect(loadCredential(ctx)?.machineId).toBe("mch_456");
	});

	test("refuses to save something that is not a credential", () => {
		ctx = createTestContext();
		expect(() => saveCredential(ctx, sampleCredential({ token: "not-a-token" }))).toThrow();
		expect(() => saveCredential(ctx, sampleCredential({ server: "http://chopin.example" }))).toThrow();
		expect(existsSync(ctx.paths.credentialFile)).toBe(false);
	});

	test("a file someone widened is put back to 0600 and the change logged (without the token)", () => {
		ctx = createTestContext();
		saveCredential(ctx, sampleCredential());
		chmodSync(ctx.paths.credentialFile, 0o644);
		expect(loadCredential(ctx)).toEqual(sampleCredential());
		expect(statSync(ctx.paths.credentialFile).mode & 0o777).toBe(0o600);
		const log = readFileSync(ctx.paths.logFile, "utf8");
		expect(log).toContain("readable by others");
		expect(log).not.toContain(TOKEN);
	});

	test("a damaged file is credential-invalid naming the file", () => {
		ctx = createTestContext();
		saveCredential(ctx, sampleCredential());
		writeFileSync(ctx.paths.credentialFile, '{"server":"https://chopin.example"}');
		expect(() => loadCredential(ctx)).toThrow(
			/machine credential at .*credential\.json is not in the expected form/,
		);
	});
});

describe("a loaded credential", () => {
	test("a loaded token is masked in every log line", () => {
		ctx = createTestContext();
		saveCredential(ctx, sampleCredential());
		const fresh = createTestContext({ env: { CHOPIN_STATE_DIR: ctx.paths.stateDir } });
		try {
			loadCredential(fresh);
			fresh.log.info({ header: `Bearer ${TOKEN}`, token: TOKEN }, `token is ${TOKEN}`);
			const log = readFileSync(fresh.paths.logFile, "utf8");
			expect(log).not.toContain(TOKEN);
			expect(log).toContain("[redacted]");
		} finally {
			fresh.cleanup();
		}
	});
});
