import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CLI_ERRORS, CliError, EXIT, exitCodeOf, isCliErrorCode, sentence, toCliError } from "./errors";

/** The rows of docs/errors.md's CLI table: | `code` | exit | when |. */
function documentedCliErrors(): Map<string, number> {
	const doc = readFileSync(join(import.meta.dir, "..", "..", "..", "..", "docs", "errors.md"), "utf8");
	const start = doc.indexOf("## CLI");
	expect(start).toBeGreaterThanOrEqual(0);
	const next = doc.indexOf("\n## ", start + 1);
	const section = doc.slice(start, next < 0 ? undefined : next);
	const rows = new Map<string, number>();
	for (const match of section.matchAll(/^\|\s*`([a-z-]+)`\s*\|\s*(\d+)\s*\|/gm))
		rows.set(match[1]!, Number(match[2]));
	return rows;
}

describe("the error table", () => {
	test("docs/errors.md lists exactly the codes and exit codes of CLI_ERRORS", () => {
		const documented = documentedCliErrors();
		const table = new Map(Object.entries(CLI_ERRORS).map(([code, entry]) => [code, entry.exit]));
		expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(table));
	});

	test("docs/errors.md lists every exit code", () => {
		const doc = readFileSync(join(import.meta.dir, "..", "..", "..", "..", "docs", "errors.md"), "utf8");
		for (const code of Object.values(EXIT)) expect(doc).toMatch(new RegExp(`^\\|\\s*${code}\\s*\\|`, "m"));
	});

	test("the brief's exit codes hold", () => {
		expect(CLI_ERRORS.usage.exit).toBe(2);
		expect(CLI_ERRORS["not-paired"].exit).toBe(3);
		expect(CLI_ERRORS["not-connected"].exit).toBe(4);
		expect(CLI_ERRORS["machine-revoked"].exit).toBe(10);
		expect(CLI_ERRORS["repository-access-lost"].exit).toBe(11);
		expect(CLI_ERRORS["client-version-refused"].exit).toBe(12);
		expect(CLI_ERRORS["machine-reauthorize"].exit).toBe(13);
		expect(CLI_ERRORS["checkout-locked"].exit).toBe(14);
		expect(CLI_ERRORS.interrupted.exit).toBe(130);
		expect(CLI_ERRORS["not-implemented"].exit).toBe(1);
	});
});

describe("CliError", () => {
	test("takes its exit code from the table", () => {
		const error = new CliError("checkout-locked", "Locked by pid 12.", "Stop it.");
		expect(error.exitCode).toBe(14);
		expect(exitCodeOf(error)).toBe(14);
		expect(error.hint).toBe("Stop it.");
		expect(error).toBeInstanceOf(Error);
	});

	test("anything else exits 1 as unexpected", () => {
		expect(exitCodeOf(new Error("boom"))).toBe(1);
		const wrapped = toCliError(new TypeError("cannot read x"));
		expect(wrapped.code).toBe("unexpected");
		expect(wrapped.message).toBe("Cannot read x.");
		expect(toCliError("text")).toMatchObject({ code: "unexpected", message: "Text." });
		const same = new CliError("usage", "Bad.");
		expect(toCliError(same)).toBe(same);
	});

	test("isCliErrorCode knows the table and nothing else", () => {
		expect(isCliErrorCode("not-paired")).toBe(true);
		expect(isCliErrorCode("toString")).toBe(false);
		expect(isCliErrorCode("nope")).toBe(false);
	});

	test("sentence makes one sentence", () => {
		expect(sentence("unknown option '--x'")).toBe("Unknown option '--x'.");
		expect(sentence("Done!")).toBe("Done!");
		expect(sentence("  ")).toBe("Unknown error.");
	});
});
