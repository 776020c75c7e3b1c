import { afterEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createTestContext, type TestContext } from "../testing/context";
import {
	addCheckout,
	type Checkout,
	loadMachineConfig,
	type MachineConfig,
	machineConfigSchema,
	saveMachineConfig,
	withCheckout,
	withoutCheckout,
} from "./machine-config";

const checkout: Checkout = {
	path: "/home/me/src/score",
	repository: "octo-org/score",
	origin: "git@github.com:octo-org/score.git",
	branch: "main",
};

function sampleConfig(): MachineConfig {
	return machineConfigSchema.parse({
		version: 1,
		server: "https://chopin.example",
		label: "laptop",
		checkouts: [checkout],
		acpCommand: ["gemini", "--acp"],
		planner: {
			command: ["my-planner", "--flag"],
			agent: "copilot",
			env: { API_KEY: "s3cret-value" },
			documents: [{ document: "https://chopin.example/octo-org/score/plan", checkout: "/home/me/src/score" }],
			sandbox: { enabled: true, write: ["/home/me/.cache/planner"] },
		},
	});
}

let ctx: TestContext;
afterEach(() => ctx?.cleanup());

describe("machine.json", () => {
	test("saves at 0600 (env values may be secrets), atomically, and loads it back", () => {
		ctx = createTestContext();
		saveMachineConfig(ctx.paths, sampleConfig());
		expect(statSync(ctx.paths.machineConfigFile).mode & 0o777).toBe(0o600);
		expect(statSync(ctx.paths.configDir).mode & 0o777).toBe(0o700);
		expect(readdirSync(ctx.paths.configDir)).toEqual(["machine.json"]);
		expect(loadMachineConfig(ctx.paths)).toEqual(sampleConfig());
	});

	test("missing is undefined", () => {
		ctx = createTestContext();
		expect(loadMachineConfig(ctx.paths)).toBeUndefined();
	});

	test("defaults fill a minimal config", () => {
		const config = machineConfigSchema.parse({
			version: 1,
			server: "https://chopin.example",
			label: "laptop",
			planner: { command: ["p"] },
		});
		expect(config.checkouts).toEqual([]);
		expect(config.acpCommand).toBeUndefined();
		expect(config.planner).toEqual({
			command: ["p"],
			env: {},
			documents: [],
			sandbox: { enabled: true, write: [] },
		});
	});

	test.each<[string, unknown]>([
		["an unknown version", { version: 2 }],
		["an insecure server", { server: "http://chopin.example" }],
		["a relative checkout path", { checkouts: [{ ...checkout, path: "src/score" }] }],
		["a repository that is not owner/name", { checkouts: [{ ...checkout, repository: "score" }] }],
		["a repository with ..", { checkouts: [{ ...checkout, repository: "../x" }] }],
		["an empty ACP command", { acpCommand: [] }],
		["an empty ACP word", { acpCommand: ["gemini", ""] }],
		["a CHOPIN_ env key", { planner: { command: ["p"], env: { CHOPIN_URL: "x" } } }],
		["a bad env key", { planner: { command: ["p"], env: { "1X": "x" } } }],
		["an unknown field", { extra: true }],
	])("refuses %s", (_name, change) => {
		const base = { version: 1, server: "https://chopin.example", label: "laptop" };
		expect(machineConfigSchema.safeParse({ ...base, ...(change as object) }).success).toBe(false);
	});

	test("a damaged file is config-invalid naming the field", () => {
		ctx = createTestContext();
		saveMachineConfig(ctx.paths, sampleConfig());
		const json = JSON.parse(readFileSync(ctx.paths.machineConfigFile, "utf8"));
		json.checkouts[0].repository = "nope";
		writeFileSync(ctx.paths.machineConfigFile, JSON.stringify(json));
		expect(() => loadMachineConfig(ctx.paths)).toThrow(/checkouts\.0\.repository/);
	});
});

describe("checkouts", () => {
	test("adding the same checkout twice is idempotent", () => {
		const config = sampleConfig();
		const again = withCheckout(config, { ...checkout });
		expect(again).toEqual({ config, changed: false, added: false });
		expect(again.config).toBe(config);
	});

	test("a new path is added; the same path with a new branch is updated in place", () => {
		const config = sampleConfig();
		const other = { ...checkout, path: "/home/me/src/other", repository: "octo-org/other" };
		const added = withCheckout(config, other);
		expect(added).toMatchObject({ changed: true, added: true });
		expect(added.config.checkouts).toEqual([checkout, other]);
		const updated = withCheckout(added.config, { ...checkout, branch: "feature" });
		expect(updated).toMatchObject({ changed: true, added: false });
		expect(updated.config.checkouts.map((c) => c.branch)).toEqual(["feature", "main"]);
	});

	test("paths compare normalised (and Windows paths without regard to case)", () => {
		const config = sampleConfig();
		expect(withCheckout(config, { ...checkout, path: "/home/me/src/score/" }).added).toBe(false);
		const windows = withCheckout(
			{ ...config, checkouts: [] },
			{ ...checkout, path: "C:\\Users\\Me\\src\\score" },
		).config;
		expect(withCheckout(windows, { ...checkout, path: "c:/users/me/src/score" }).added).toBe(false);
	});

	test("removing is idempotent", () => {
		const config = sampleConfig();
		const removed = withoutCheckout(config, checkout.path);
		expect(removed.removed).toBe(true);
		expect(removed.config.checkouts).toEqual([]);
		expect(withoutCheckout(removed.config, checkout.path).removed).toBe(false);
	});

	test("addCheckout saves only when something changed", () => {
		ctx = createTestContext();
		saveMachineConfig(ctx.paths, sampleConfig());
		const before = statSync(ctx.paths.machineConfigFile).ino;
		expect(addCheckout(ctx.paths, { ...checkout }).added).toBe(false);
		expect(statSync(ctx.paths.machineConfigFile).ino).toBe(before);
		const other = { ...checkout, path: "/home/me/src/other" };
		expect(addCheckout(ctx.paths, other).added).toBe(true);
		expect(loadMachineConfig(ctx.paths)?.checkouts).toEqual([checkout, other]);
		expect(addCheckout(ctx.paths, other).added).toBe(false);
	});
});
