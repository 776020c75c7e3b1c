// Fixture validation: field errors and cross-references are reported together, by path, with
// the fixture-invalid code; the shipped example fixture is valid.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EmulatorError } from "./github-emulator-errors";
import { type FixtureInput, loadFixtureFile, parseFixture } from "./github-fixture";

const dir = mkdtempSync(join(tmpdir(), "chopin-gh-fixture-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function problemsOf(input: unknown): string[] {
	try {
		parseFixture(input);
	} catch (err) {
		expect(err).toBeInstanceOf(EmulatorError);
		expect((err as EmulatorError).code).toBe("fixture-invalid");
		expect((err as EmulatorError).hint).toContain("docs/github-emulator.md");
		return [...(err as EmulatorError).details];
	}
	throw new Error("the fixture was accepted");
}

const app = { clientId: "Iv1.a", clientSecret: "s" };

describe("parseFixture", () => {
	test("fills defaults and turns ISO dates into milliseconds", () => {
		const fixture = parseFixture({
			apps: [app],
			users: [{ login: "octocat" }],
			tokens: [{ token: "t", login: "octocat", expiresAt: "2026-01-01T08:00:00Z" }],
			repositories: [{ fullName: "octocat/x" }],
		} satisfies FixtureInput);
		expect(fixture.users[0]!.orgs).toEqual([]);
		expect(fixture.tokens[0]!.expiresAt).toBe(Date.UTC(2026, 0, 1, 8));
		expect(fixture.repositories[0]).toMatchObject({ private: false, permissions: {}, defaultBranch: "main" });
	});

	test("reports bad fields by path", () => {
		const problems = problemsOf({
			apps: [{ clientId: "", clientSecret: "s", redirectUri: "ftp://x" }],
			users: [
				{ login: "-bad-", id: -1 },
				{ login: "ok", extra: true },
			],
			repositories: [{ fullName: "no-slash", permissions: { ok: "owner" } }],
		});
		expect(problems).toEqual(
			expect.arrayContaining([
				expect.stringMatching(/^apps\.0\.clientId: /),
				expect.stringMatching(/^apps\.0\.redirectUri: /),
				expect.stringMatching(/^users\.0\.login: must be a GitHub login/),
				expect.stringMatching(/^users\.0\.id: /),
				expect.stringMatching(/^users\.1: Unrecognized key: "extra"/),
				expect.stringMatching(/^repositories\.0\.fullName: must be "owner\/name"/),
				expect.stringMatching(/^repositories\.0\.permissions\.ok: /),
			]),
		);
	});

	test("needs at least one app", () => {
		expect(problemsOf({ apps: [], users: [] })).toEqual([expect.stringMatching(/^apps: /)]);
		expect(problemsOf(null)).toEqual([expect.stringMatching(/^\(root\): /)]);
	});

	test("reports duplicates and names that point nowhere", () => {
		const problems = problemsOf({
			apps: [app, app],
			users: [{ login: "octocat", id: 7, orgs: ["hubot"] }, { login: "Octocat" }, { login: "hubot", id: 7 }],
			tokens: [
				{ token: "t", login: "ghost" },
				{ token: "t", login: "octocat" },
			],
			repositories: [{ fullName: "o/r", permissions: { nobody: "read" } }, { fullName: "O/R" }],
		});
		expect(problems).toEqual([
			'apps.1.clientId: duplicate clientId "Iv1.a"',
			'users.1.login: duplicate login "octocat"',
			'tokens.1.token: duplicate token "t"',
			'repositories.1.fullName: duplicate repository "o/r"',
			"users.2.id: duplicate id 7",
			'tokens.0.login: no user "ghost" in users',
			'repositories.0.permissions.nobody: no user "nobody" in users',
			'users.0.orgs.0: "hubot" is a user; an organization needs its own login',
		]);
	});
});

describe("loadFixtureFile", () => {
	test("the shipped example fixture is valid", () => {
		const fixture = loadFixtureFile(join(import.meta.dir, "github-fixture.example.json"));
		expect(fixture.apps[0]!.redirectUri).toBe("http://localhost:3000");
	});

	test("a missing file or bad JSON is fixture-unreadable; a bad fixture names the file", () => {
		const missing = join(dir, "missing.json");
		expect(() => loadFixtureFile(missing)).toThrow(`Cannot read the fixture file ${missing} (ENOENT).`);
		const broken = join(dir, "broken.json");
		writeFileSync(broken, "{ nope");
		expect(() => loadFixtureFile(broken)).toThrow(expect.objectContaining({ code: "fixture-unreadable" }));
		const invalid = join(dir, "invalid.json");
		writeFileSync(invalid, JSON.stringify({ apps: [] }));
		expect(() => loadFixtureFile(invalid)).toThrow(
			`The fixture file ${invalid} is not a valid GitHub emulator fixture`,
		);
	});
});
