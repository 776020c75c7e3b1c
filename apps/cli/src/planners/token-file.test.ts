import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "../testing/context";
import { TokenFile } from "./token-file";

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("TokenFile", () => {
	test("writes 0600 in a private folder, replaces, and removes idempotently", () => {
		dir = makeTempDir();
		const file = new TokenFile(join(dir, "tokens", "doc", "planner-token"));
		file.write("one");
		expect(readFileSync(file.path, "utf8")).toBe("one");
		expect(statSync(file.path).mode & 0o777).toBe(0o600);
		expect(statSync(join(dir, "tokens", "doc")).mode & 0o777).toBe(0o700);
		file.write("two");
		expect(readFileSync(file.path, "utf8")).toBe("two");
		file.remove();
		file.remove();
		expect(existsSync(file.path)).toBe(false);
	});
});
