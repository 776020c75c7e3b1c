import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadCredential, saveCredential } from "../machine/credential";
import { loadMachineConfig, machineConfigSchema, saveMachineConfig } from "../machine/machine-config";
import { createTestContext, type TestContext } from "../testing/context";
import { sampleCredential } from "../testing/credential";
import { MAX_CHECKED_FILES, readChecked, recordChecked } from "./checked-files";
import { ensurePrivateDir } from "./paths";

let ctx: TestContext;
afterEach(() => ctx?.cleanup());

function setUp(): { file: string; store: { checkedFile: string } } {
	ctx = createTestContext();
	ensurePrivateDir(ctx.paths.stateDir);
	const file = join(ctx.paths.stateDir, "thing.json");
	writeFileSync(file, '{"a":1}\n');
	return { file, store: { checkedFile: ctx.paths.checkedFile } };
}

describe("readChecked and recordChecked", () => {
	test("a missing file is missing; an unrecorded one is unchecked; a recorded one is trusted with its JSON", () => {
		const { file, store } = setUp();
		expect(readChecked(store, join(ctx.paths.stateDir, "none.json"))).toEqual({ state: "missing" });
		expect(readChecked(store, file)).toEqual({ state: "unchecked" });
		recordChecked(store, file, '{"a":1}\n');
		expect(readChecked(store, file)).toEqual({ state: "trusted", json: { a: 1 } });
		// The record is private and holds digests, not content.
		expect(statSync(ctx.paths.checkedFile).mode & 0o777).toBe(0o600);
		expect(readFileSync(ctx.paths.checkedFile, "utf8")).not.toContain('"a"');
	});

	test("changed bytes, another version's record, or a damaged record are unchecked", () => {
		const { file, store } = setUp();
		recordChecked(store, file, '{"a":1}\n');
		writeFileSync(file, '{"a": 1}\n');
		expect(readChecked(store, file).state).toBe("unchecked");
		writeFileSync(file, '{"a":1}\n');
		expect(readChecked({ ...store, version: "9.9.9" }, file).state).toBe("unchecked");
		expect(readChecked(store, file).state).toBe("trusted");
		writeFileSync(ctx.paths.checkedFile, "{not json");
		expect(readChecked(store, file).state).toBe("unchecked");
		// Recording again repairs it.
		recordChecked(store, file, '{"a":1}\n');
		expect(readChecked(store, file).state).toBe("trusted");
	});

	test("a new version starts a fresh record", () => {
		const { file, store } = setUp();
		recordChecked({ ...store, version: "0.0.1" }, file, '{"a":1}\n');
		recordChecked(store, join(ctx.paths.stateDir, "other.json"), "{}");
		expect(readChecked({ ...store, version: "0.0.1" }, file).state).toBe("unchecked");
		expect(Object.keys(JSON.parse(readFileSync(ctx.paths.checkedFile, "utf8")).files)).toEqual([
			join(ctx.paths.stateDir, "other.json"),
		]);
	});

	test("an empty or unreadable file is unchecked, and the full check says why", () => {
		const { file, store } = setUp();
		writeFileSync(file, "");
		recordChecked(store, file, "");
		expect(readChecked(store, file).state).toBe("unchecked");
		expect(readChecked(store, ctx.paths.stateDir).state).toBe("unchecked");
	});

	test(`keeps the newest ${MAX_CHECKED_FILES} records`, () => {
		const { store } = setUp();
		const files = Array.from({ length: MAX_CHECKED_FILES + 3 }, (_, i) =>
			join(ctx.paths.stateDir, `f${i}.json`),
		);
		for (const f of files) {
			writeFileSync(f, "{}");
			recordChecked(store, f, "{}");
		}
		const kept = Object.keys(JSON.parse(readFileSync(ctx.paths.checkedFile, "utf8")).files);
		expect(kept).toEqual(files.slice(3));
		expect(readChecked(store, files[0]!).state).toBe("unchecked");
		expect(readChecked(store, files.at(-1)!).state).toBe("trusted");
	});

	test("recording never creates the state dir and never throws", () => {
		ctx = createTestContext();
		expect(existsSync(ctx.paths.stateDir)).toBe(false);
		recordChecked({ checkedFile: ctx.paths.checkedFile }, "/x/machine.json", "{}");
		expect(existsSync(ctx.paths.stateDir)).toBe(false);
	});
});

describe("the loaders record what the full check accepted unchanged", () => {
	const config = () =>
		machineConfigSchema.parse({
			version: 1,
			server: "https://chopin.example",
			label: "laptop",
			checkouts: [
				{ path: "/src/score", repository: "octo-org/score", origin: "git@github.com:octo-org/score.git" },
			],
		});

	test("a credential and a config chopin wrote are trusted once loaded", () => {
		ctx = createTestContext();
		saveCredential(ctx, sampleCredential());
		saveMachineConfig(ctx.paths, config());
		expect(readChecked(ctx.paths, ctx.paths.credentialFile).state).toBe("unchecked");
		expect(readChecked(ctx.paths, ctx.paths.machineConfigFile).state).toBe("unchecked");
		loadCredential(ctx);
		loadMachineConfig(ctx.paths);
		expect(readChecked(ctx.paths, ctx.paths.credentialFile)).toEqual({
			state: "trusted",
			json: sampleCredential(),
		});
		expect(readChecked(ctx.paths, ctx.paths.machineConfigFile)).toEqual({ state: "trusted", json: config() });
	});

	test("a file the check changes (defaults filled in, a label trimmed) is not recorded", () => {
		ctx = createTestContext();
		ensurePrivateDir(ctx.paths.stateDir);
		ensurePrivateDir(ctx.paths.configDir);
		// By hand: no checkouts key (defaults to []), and a label with spaces around it.
		writeFileSync(
			ctx.paths.machineConfigFile,
			JSON.stringify({ version: 1, server: "https://chopin.example", label: " laptop " }),
		);
		expect(loadMachineConfig(ctx.paths)).toMatchObject({ label: "laptop", checkouts: [] });
		expect(readChecked(ctx.paths, ctx.paths.machineConfigFile).state).toBe("unchecked");
	});

	test("a file the check refuses is not recorded", () => {
		ctx = createTestContext();
		saveMachineConfig(ctx.paths, config());
		writeFileSync(ctx.paths.machineConfigFile, JSON.stringify({ ...config(), version: 2 }));
		expect(() => loadMachineConfig(ctx.paths)).toThrow(/not in the expected form/);
		expect(readChecked(ctx.paths, ctx.paths.machineConfigFile).state).toBe("unchecked");
	});
});
