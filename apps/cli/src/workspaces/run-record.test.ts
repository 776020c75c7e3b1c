import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "../testing/context";
import { runRecord } from "../testing/run-record";
import {
	listRunRecords,
	readRunRecord,
	runDir,
	runEnded,
	runRecordPath,
	runWorkspacePath,
	writeRunRecord,
} from "./run-record";

let dir = "";
afterEach(() => {
	if (dir) rmSync(dir, { recursive: true, force: true });
	dir = "";
});

describe("run records", () => {
	test("paths under <state>/runs/<run id>; a name that is no run id is refused", () => {
		expect(runWorkspacePath("/s", "run_abcdefghijklmnop")).toBe("/s/runs/run_abcdefghijklmnop/workspace");
		expect(runRecordPath("/s", "run_abcdefghijklmnop")).toBe("/s/runs/run_abcdefghijklmnop/run.json");
		expect(() => runDir("/s", "../escape")).toThrow(expect.objectContaining({ code: "run-record-invalid" }));
	});

	test("written at 0600 in a 0700 folder, read back as written; a bad record is refused before it is written", () => {
		dir = makeTempDir();
		const written = runRecord({ status: "finished", endedAt: 2_000 });
		writeRunRecord(dir, written);
		const path = runRecordPath(dir, written.id);
		expect(statSync(path).mode & 0o777).toBe(0o600);
		expect(statSync(runDir(dir, written.id)).mode & 0o777).toBe(0o700);
		expect(readRunRecord(dir, written.id)).toEqual(written);
		expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(written);
		expect(() => writeRunRecord(dir, { ...written, base: "main" })).toThrow();
		expect(readRunRecord(dir, written.id)).toEqual(written);
		expect(readRunRecord(dir, "run_bbbbbbbbbbbbbbbb")).toBeUndefined();
	});

	test("listed oldest first, with what is wrong with a folder whose record cannot be read", () => {
		dir = makeTempDir();
		writeRunRecord(dir, runRecord({ id: "run_bbbbbbbbbbbbbbbb", createdAt: 5 }));
		writeRunRecord(dir, runRecord({ id: "run_cccccccccccccccc", createdAt: 1 }));
		mkdirSync(join(dir, "runs", "run_dddddddddddddddd"));
		mkdirSync(join(dir, "runs", "run_eeeeeeeeeeeeeeee"));
		writeFileSync(join(dir, "runs", "run_eeeeeeeeeeeeeeee", "run.json"), "{not json");
		mkdirSync(join(dir, "runs", "run_ffffffffffffffff"));
		writeFileSync(
			join(dir, "runs", "run_ffffffffffffffff", "run.json"),
			JSON.stringify(runRecord({ id: "run_bbbbbbbbbbbbbbbb" })),
		);
		mkdirSync(join(dir, "runs", "not-a-run"));
		const listed = listRunRecords(dir);
		expect(listed.map((l) => [l.id, l.record?.createdAt ?? l.problem])).toEqual([
			["run_dddddddddddddddd", "it has no run.json"],
			["run_eeeeeeeeeeeeeeee", expect.stringContaining("is not valid JSON")],
			["run_ffffffffffffffff", "its run.json is run run_bbbbbbbbbbbbbbbb's"],
			["run_cccccccccccccccc", 1],
			["run_bbbbbbbbbbbbbbbb", 5],
		]);
	});

	test("ended means a final status", () => {
		for (const status of ["finished", "failed", "stopped"] as const) expect(runEnded({ status })).toBe(true);
		for (const status of ["preparing", "running", "paused"] as const)
			expect(runEnded({ status })).toBe(false);
	});
});
