import { afterEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { CliError } from "../program/errors";
import { makeTempDir } from "../testing/context";
import { readJsonFile, removeFile, writeFileAtomic, writeJsonAtomic } from "./files";

const dirs: string[] = [];
function tempDir(): string {
	const dir = makeTempDir();
	dirs.push(dir);
	return dir;
}
afterEach(() => {
	for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const modeOf = (path: string) => fs.statSync(path).mode & 0o777;

describe("writeFileAtomic", () => {
	test("writes the content at 0600 and leaves no temp file", () => {
		const dir = tempDir();
		const file = join(dir, "secret.json");
		writeFileAtomic(file, "one");
		expect(fs.readFileSync(file, "utf8")).toBe("one");
		expect(modeOf(file)).toBe(0o600);
		expect(fs.readdirSync(dir)).toEqual(["secret.json"]);
	});

	test("replacing a file that was wider makes it the requested mode", () => {
		const dir = tempDir();
		const file = join(dir, "config.json");
		fs.writeFileSync(file, "old", { mode: 0o644 });
		writeFileAtomic(file, "new", { mode: 0o600 });
		expect(fs.readFileSync(file, "utf8")).toBe("new");
		expect(modeOf(file)).toBe(0o600);
	});

	test("any mode is exact, whatever the umask", () => {
		const dir = tempDir();
		const file = join(dir, "shared.txt");
		writeFileAtomic(file, "x", { mode: 0o664 });
		expect(modeOf(file)).toBe(0o664);
	});

	test("bytes are written whole", () => {
		const dir = tempDir();
		const file = join(dir, "big.bin");
		const data = new Uint8Array(3 * 1024 * 1024).map((_, i) => i % 251);
		writeFileAtomic(file, data);
		expect(new Uint8Array(fs.readFileSync(file))).toEqual(data);
	});

	test("a failing rename leaves the old file and no temp file", () => {
		const dir = tempDir();
		const file = join(dir, "credential.json");
		writeFileAtomic(file, "old");
		const failing = {
			...fs,
			renameSync: () => {
				throw Object.assign(new Error("EIO: simulated"), { code: "EIO" });
			},
		};
		expect(() => writeFileAtomic(file, "new", { fs: failing })).toThrow("EIO: simulated");
		expect(fs.readFileSync(file, "utf8")).toBe("old");
		expect(modeOf(file)).toBe(0o600);
		expect(fs.readdirSync(dir)).toEqual(["credential.json"]);
	});

	test("a failing write leaves the old file and no temp file", () => {
		const dir = tempDir();
		const file = join(dir, "machine.json");
		writeFileAtomic(file, "old");
		const failing = {
			...fs,
			writeSync: () => {
				throw Object.assign(new Error("ENOSPC: simulated"), { code: "ENOSPC" });
			},
		};
		expect(() => writeFileAtomic(file, "new", { fs: failing })).toThrow("ENOSPC");
		expect(fs.readFileSync(file, "utf8")).toBe("old");
		expect(fs.readdirSync(dir)).toEqual(["machine.json"]);
	});

	test("a process killed between write and rename leaves the old file; the next write sweeps its temp file", async () => {
		const dir = tempDir();
		const file = join(dir, "credential.json");
		writeFileAtomic(file, "old");
		const child = Bun.spawn(
			[process.execPath, join(import.meta.dir, "..", "testing", "fixtures", "crash-write.ts"), file, "new"],
			{
				stderr: "pipe",
			},
		);
		await child.exited;
		expect(child.signalCode).toBe("SIGKILL");
		expect(fs.readFileSync(file, "utf8")).toBe("old");
		const orphans = fs.readdirSync(dir).filter((name) => name !== "credential.json");
		expect(orphans).toHaveLength(1);
		expect(orphans[0]).toMatch(new RegExp(`^\\.credential\\.json\\.${child.pid}\\.[0-9a-f]+\\.tmp$`));
		// The orphan holds the new content at the final mode: never a wider-readable copy.
		expect(modeOf(join(dir, orphans[0]!))).toBe(0o600);
		writeFileAtomic(file, "newer");
		expect(fs.readFileSync(file, "utf8")).toBe("newer");
		expect(fs.readdirSync(dir)).toEqual(["credential.json"]);
	});

	test("a live writer's temp file is left alone", async () => {
		const dir = tempDir();
		const file = join(dir, "x.json");
		// A process that stays alive gives a live pid to name the temp file after.
		const writer = Bun.spawn(["sleep", "30"]);
		try {
			const live = join(dir, `.x.json.${writer.pid}.abcdef.tmp`);
			fs.writeFileSync(live, "in progress");
			writeFileAtomic(file, "mine");
			expect(fs.existsSync(live)).toBe(true);
		} finally {
			writer.kill("SIGKILL");
			await writer.exited;
		}
	});
});

describe("readJsonFile", () => {
	const schema = z.strictObject({ name: z.string() });
	const error = { code: "config-invalid" as const, what: "machine config" };

	test("a missing file is undefined", () => {
		expect(readJsonFile(join(tempDir(), "none.json"), schema, error)).toBeUndefined();
	});

	test("reads what writeJsonAtomic wrote", () => {
		const file = join(tempDir(), "a.json");
		writeJsonAtomic(file, { name: "x" });
		expect(readJsonFile(file, schema, error)).toEqual({ name: "x" });
		expect(fs.readFileSync(file, "utf8")).toBe('{\n\t"name": "x"\n}\n');
	});

	test("not JSON is the given code, naming the file", () => {
		const file = join(tempDir(), "a.json");
		fs.writeFileSync(file, "{nope");
		const thrown = (() => {
			try {
				readJsonFile(file, schema, error);
			} catch (e) {
				return e;
			}
		})();
		expect(thrown).toBeInstanceOf(CliError);
		expect(thrown).toMatchObject({ code: "config-invalid" });
		expect((thrown as CliError).message).toBe(`The machine config at ${file} is not valid JSON.`);
		expect((thrown as CliError).hint).toContain(file);
	});

	test("the wrong shape names the field", () => {
		const file = join(tempDir(), "a.json");
		fs.writeFileSync(file, '{"name": 3}');
		expect(() => readJsonFile(file, schema, error)).toThrow(/not in the expected form \(name: /);
	});
});

describe("removeFile", () => {
	test("removes, and removing nothing is fine", () => {
		const file = join(tempDir(), "a");
		fs.writeFileSync(file, "x");
		expect(removeFile(file)).toBe(true);
		expect(removeFile(file)).toBe(false);
	});
});
