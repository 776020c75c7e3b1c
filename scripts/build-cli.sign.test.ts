// adHocSign fails closed: the macOS re-signing build-cli does, run against a stand-in for codesign (only macOS has the real one).
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { adHocSign } from "./build-cli";

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A codesign that logs each call's arguments and exits 1 when its arguments contain `failOn`. */
function standIn(failOn: string): { codesign: string; calls: () => string[] } {
	const dir = mkdtempSync(join(tmpdir(), "chopin-codesign-"));
	dirs.push(dir);
	const log = join(dir, "calls");
	writeFileSync(log, "");
	const codesign = join(dir, "codesign");
	writeFileSync(
		codesign,
		`#!/bin/sh\necho "$*" >> '${log}'\ncase " $* " in *" ${failOn} "*) echo "invalid signature" >&2; exit 1;; esac\n`,
	);
	chmodSync(codesign, 0o755);
	return { codesign, calls: () => readFileSync(log, "utf8").trim().split("\n") };
}

describe.skipIf(process.platform === "win32")("adHocSign", () => {
	test("removes Bun's signature, signs ad hoc, then verifies strictly", async () => {
		const { codesign, calls } = standIn("--never");
		await adHocSign("/release/chopin-darwin-arm64", codesign);
		expect(calls()).toEqual([
			"--remove-signature /release/chopin-darwin-arm64",
			"--force --sign - /release/chopin-darwin-arm64",
			"--verify --strict /release/chopin-darwin-arm64",
		]);
	});

	test("throws when the strict verify fails, naming the step and what codesign said", async () => {
		const { codesign } = standIn("--strict");
		await expect(adHocSign("/release/chopin-darwin-x64", codesign)).rejects.toThrow(
			"codesign --verify --strict /release/chopin-darwin-x64 failed (exit 1): invalid signature",
		);
	});

	test("stops at the first step that fails: nothing is verified after a failed signing", async () => {
		const { codesign, calls } = standIn("--sign");
		await expect(adHocSign("/release/chopin-darwin-x64", codesign)).rejects.toThrow(
			"codesign --force --sign -",
		);
		expect(calls()).toHaveLength(2);
	});
});
