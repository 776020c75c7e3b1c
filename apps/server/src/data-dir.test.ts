import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "./config";
import { ensureDataDir, loadSecretKey } from "./data-dir";
import { Secret } from "./secret";

let root: string;
beforeEach(() => {
	root = mkdtempSync(join(tmpdir(), "chopin-data-"));
});
afterEach(() => {
	rmSync(root, { recursive: true, force: true });
});

const mode = (path: string) => statSync(path).mode & 0o777;

describe("ensureDataDir", () => {
	test("creates the directory and its parents, the directory at 0700", () => {
		const dir = join(root, "a", "b", ".data");
		ensureDataDir(dir);
		expect(mode(dir)).toBe(0o700);
		ensureDataDir(dir);
		expect(mode(dir)).toBe(0o700);
	});
});

describe("loadSecretKey", () => {
	test("makes a 32-byte key at mode 0600 on first start and reads the same one after", () => {
		const first = loadSecretKey({ dataDir: root });
		expect(first.length).toBe(32);
		const path = join(root, "secret.key");
		expect(mode(path)).toBe(0o600);
		expect(readFileSync(path, "utf8").trim()).toMatch(/^[0-9a-f]{64}$/);
		expect(loadSecretKey({ dataDir: root })).toEqual(first);
		// No temporary file is left behind.
		expect(readdirSync(root)).toEqual(["secret.key"]);
	});

	test("CHOPIN_SECRET_KEY wins and nothing is written", () => {
		const key = new Uint8Array(32).fill(7);
		expect(loadSecretKey({ dataDir: root, secretKey: new Secret(key) })).toEqual(key);
		expect(readdirSync(root)).toEqual([]);
	});

	test("a key file that holds no key stops the start with a ConfigError", () => {
		writeFileSync(join(root, "secret.key"), "garbage\n", { mode: 0o600 });
		expect(() => loadSecretKey({ dataDir: root })).toThrow(ConfigError);
	});

	test("processes starting at once all end up with the same key", async () => {
		const module = join(import.meta.dir, "data-dir.ts");
		const code = `import { loadSecretKey } from ${JSON.stringify(module)};
			console.log(Buffer.from(loadSecretKey({ dataDir: process.env.DIR })).toString("hex"));`;
		const children = Array.from({ length: 6 }, () =>
			Bun.spawn(["bun", "-e", code], {
				env: { ...process.env, DIR: root },
				stdout: "pipe",
				stderr: "inherit",
			}),
		);
		const keys = await Promise.all(children.map(async (c) => (await new Response(c.stdout).text()).trim()));
		expect(await Promise.all(children.map((c) => c.exited))).toEqual([0, 0, 0, 0, 0, 0]);
		expect(new Set(keys).size).toBe(1);
		expect(readFileSync(join(root, "secret.key"), "utf8").trim()).toBe(keys[0]!);
		expect(readdirSync(root)).toEqual(["secret.key"]);
	}, 30_000);
});
