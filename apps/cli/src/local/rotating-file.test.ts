import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "../testing/context";
import { RotatingFile } from "./rotating-file";

const dirs: string[] = [];
const files: RotatingFile[] = [];
afterEach(() => {
	for (const file of files.splice(0)) file.close();
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function setup(maxBytes: number, keep: number) {
	const dir = makeTempDir();
	dirs.push(dir);
	const path = join(dir, "logs", "chopin.log");
	let prepared = 0;
	const file = new RotatingFile({
		path,
		maxBytes,
		keep,
		prepare: () => {
			prepared++;
			mkdirSync(join(dir, "logs"), { recursive: true, mode: 0o700 });
		},
	});
	files.push(file);
	return { dir, path, file, prepared: () => prepared };
}

const line = (n: number) => `line ${String(n).padStart(4, "0")} ${"x".repeat(40)}\n`; // 51 bytes

describe("RotatingFile", () => {
	test("creates nothing until the first write, then a 0600 file", () => {
		const { dir, path, file, prepared } = setup(1000, 2);
		expect(readdirSync(dir)).toEqual([]);
		file.write(line(1));
		expect(prepared()).toBe(1);
		expect(readFileSync(path, "utf8")).toBe(line(1));
		expect(statSync(path).mode & 0o777).toBe(0o600);
	});

	test("rotates before a write would pass the limit, keeping N old files, newest first", () => {
		const { path, file } = setup(200, 3); // three 51-byte lines fit, a fourth does not
		for (let n = 1; n <= 20; n++) file.write(line(n));
		const names = readdirSync(join(path, "..")).sort();
		expect(names).toEqual(["chopin.log", "chopin.log.1", "chopin.log.2", "chopin.log.3"]);
		for (const name of names) expect(statSync(join(path, "..", name)).size).toBeLessThanOrEqual(200);
		expect(readFileSync(path, "utf8")).toBe(line(19) + line(20));
		expect(readFileSync(`${path}.1`, "utf8")).toBe(line(16) + line(17) + line(18));
		expect(readFileSync(`${path}.3`, "utf8")).toBe(line(10) + line(11) + line(12));
		// Lines 1-9 went with the files rotated past .3: bounded disk use.
		const all = names.map((name) => readFileSync(join(path, "..", name), "utf8")).join("");
		expect(all).not.toContain("line 0009");
	});

	test("a line larger than the limit still gets written, alone in its file", () => {
		const { path, file } = setup(100, 2);
		file.write(line(1));
		const big = `${"y".repeat(300)}\n`;
		file.write(big);
		file.write(line(2));
		expect(readFileSync(`${path}.2`, "utf8")).toBe(line(1));
		expect(readFileSync(`${path}.1`, "utf8")).toBe(big);
		expect(readFileSync(path, "utf8")).toBe(line(2));
	});

	test("appends to an existing file and counts its size", () => {
		const { path, file } = setup(120, 1);
		file.write(line(1));
		file.close();
		const again = new RotatingFile({ path, maxBytes: 120, keep: 1 });
		files.push(again);
		again.write(line(2));
		expect(readFileSync(path, "utf8")).toBe(line(1) + line(2));
		again.write(line(3));
		expect(readFileSync(`${path}.1`, "utf8")).toBe(line(1) + line(2));
		expect(readFileSync(path, "utf8")).toBe(line(3));
	});

	test("when another writer already rotated the file, it only reopens", () => {
		const { path, file } = setup(120, 2);
		const other = new RotatingFile({ path, maxBytes: 120, keep: 2 });
		files.push(other);
		file.write(line(1));
		other.write(line(2)); // both appended to the same file: 102 bytes
		file.write(line(3)); // file rotates: chopin.log.1 holds 1 and 2
		other.write(line(4)); // other's file was rotated under it: it reopens, does not rotate again
		expect(readFileSync(`${path}.1`, "utf8")).toBe(line(1) + line(2));
		expect(readFileSync(path, "utf8")).toBe(line(3) + line(4));
		expect(existsSync(`${path}.2`)).toBe(false);
	});

	test("a file moved away is recreated at the next rotation point", () => {
		const { path, file } = setup(120, 1);
		file.write(line(1));
		file.write(line(2));
		renameSync(path, `${path}.moved`);
		file.write(line(3));
		expect(readFileSync(path, "utf8")).toBe(line(3));
		expect(readFileSync(`${path}.moved`, "utf8")).toBe(line(1) + line(2));
	});

	test("rejects nonsense limits", () => {
		expect(() => new RotatingFile({ path: "/x", maxBytes: 0, keep: 1 })).toThrow();
		expect(() => new RotatingFile({ path: "/x", maxBytes: 10, keep: 0 })).toThrow();
	});
});
