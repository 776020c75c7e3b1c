import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadConfig } from "./config";
import { readEnvFiles } from "./env-files";

let dir: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "chopin-env-"));
});
afterEach(() => {
	rmSync(dir, { recursive: true, force: true });
});

test("LOCAL_ACCOUNTS=@file reads the file, relative paths from the working directory", () => {
	const accounts = { users: [{ login: "alice" }], repositories: { "acme/app": { alice: "write" } } };
	writeFileSync(join(dir, "accounts.json"), JSON.stringify(accounts));
	const env = readEnvFiles({ LOCAL_ACCOUNTS: "@accounts.json", PORT: "1" }, { cwd: dir });
	expect(env.PORT).toBe("1");
	const config = loadConfig(env, { cwd: dir });
	expect(config.localAccounts?.repositories).toEqual({ "acme/app": { alice: "write" } });
	expect(readEnvFiles({ LOCAL_ACCOUNTS: `@${join(dir, "accounts.json")}` }).LOCAL_ACCOUNTS).toBe(
		JSON.stringify(accounts),
	);
});

test("a missing file is a ConfigError naming the variable and the path", () => {
	try {
		readEnvFiles({ LOCAL_ACCOUNTS: "@missing.json" }, { cwd: dir });
		throw new Error("no error");
	} catch (error) {
		expect(error).toBeInstanceOf(ConfigError);
		expect((error as ConfigError).variable).toBe("LOCAL_ACCOUNTS");
		expect((error as ConfigError).message).toBe(
			`LOCAL_ACCOUNTS names a file that cannot be read: ${join(dir, "missing.json")} (ENOENT).`,
		);
	}
});

test("inline values pass through untouched", () => {
	const env = { LOCAL_ACCOUNTS: '{"users":[]}', OTHER: "@not-a-file-variable" };
	expect(readEnvFiles(env)).toEqual(env);
});
