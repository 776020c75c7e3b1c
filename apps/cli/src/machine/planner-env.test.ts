import { afterEach, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "../testing/context";
import { refusal } from "../testing/refusal";
import { readEnvFile } from "./planner-env";

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function file(text: string): string {
	const dir = makeTempDir();
	dirs.push(dir);
	const path = join(dir, "planner.env");
	writeFileSync(path, text, { mode: 0o600 });
	return path;
}

describe("--env-file", () => {
	test("KEY=VALUE lines; comments, blanks, export and one pair of quotes; nothing expanded", () => {
		const path = file("# keys\n\nexport A='one two'\nB=\"x=$HOME\"\r\nC=\nD=  spaced  \nE='unbalanced\"\n");
		expect(readEnvFile(path)).toEqual([
			["A", "one two"],
			["B", "x=$HOME"],
			["C", ""],
			["D", "spaced"],
			["E", "'unbalanced\""],
		]);
	});

	test("unreadable: env-file-unreadable (exit 2); a bad line names path:line, never the value", () => {
		const missing = refusal(() => readEnvFile("/nonexistent/planner.env"));
		expect(missing).toMatchObject({ code: "env-file-unreadable", exitCode: 2 });
		expect(missing.message).toBe("--env-file /nonexistent/planner.env cannot be read (ENOENT).");
		const dir = makeTempDir();
		dirs.push(dir);
		expect(refusal(() => readEnvFile(dir)).code).toBe("env-file-unreadable");

		const bad = file("OK=1\nnot a pair secret-value\n");
		const invalid = refusal(() => readEnvFile(bad));
		expect(invalid).toMatchObject({ code: "env-invalid", exitCode: 2 });
		expect(invalid.message).toBe(`--env-file ${bad}:2 is not KEY=VALUE.`);
		expect(refusal(() => readEnvFile(file("1X=secret-value")))).toMatchObject({ code: "env-invalid" });
		const reserved = refusal(() => readEnvFile(file("CHOPIN_URL=secret-value")));
		expect(reserved.code).toBe("env-reserved");
		for (const error of [invalid, reserved]) expect(error.message).not.toContain("secret-value");
	});
});
