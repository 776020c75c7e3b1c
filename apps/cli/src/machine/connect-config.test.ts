import { describe, expect, test } from "bun:test";
import type { ConnectOptions } from "../commands/connect";
import { defaultLabel, nextMachineConfig } from "./connect-config";
import type { MachineConfig } from "./machine-config";

const SERVER = "https://chopin.example";
const score = { path: "/src/score", repository: "octo/score", origin: "git@github.com:octo/score.git" };
const other = { path: "/src/other", repository: "octo/other", origin: "git@github.com:octo/other.git" };

function options(
	overrides: Omit<Partial<ConnectOptions>, "planner"> & { planner?: Partial<ConnectOptions["planner"]> } = {},
): ConnectOptions {
	return {
		checkout: score.path,
		run: true,
		...overrides,
		planner: { documents: [], env: {}, sandbox: { enabled: true, write: [] }, ...overrides.planner },
	};
}

const next = (current: MachineConfig | undefined, checkout = score, o = options()) =>
	nextMachineConfig(current, { server: SERVER, hostname: "ana-laptop", checkout, options: o });

describe("the machine config connect writes", () => {
	test("first time: the server, the hostname as label, the checkout, the ACP command", () => {
		expect(next(undefined, score, options({ acpCommand: ["gemini", "--acp"] }))).toEqual({
			version: 1,
			server: SERVER,
			label: "ana-laptop",
			checkouts: [score],
			acpCommand: ["gemini", "--acp"],
		});
	});

	test("again in another checkout: only adds it, keeping label, ACP command and Planner", () => {
		const first = next(
			undefined,
			score,
			options({ label: "laptop", acpCommand: ["gemini"], planner: { command: ["p"], env: { K: "v" } } }),
		);
		const second = next(first, other);
		expect(second.checkouts).toEqual([score, other]);
		expect(second).toMatchObject({
			label: "laptop",
			acpCommand: ["gemini"],
			planner: { command: ["p"], env: { K: "v" } },
		});
		expect(next(second, other)).toEqual(second); // idempotent
	});

	test("Planner options merge: documents and variables add up, --no-sandbox sticks until a new command", () => {
		const first = next(
			undefined,
			score,
			options({ planner: { command: ["p"], documents: ["d1"], env: { A: "1" } } }),
		);
		const second = next(
			first,
			other,
			options({
				planner: { documents: ["d2", "d1"], env: { B: "2" }, sandbox: { enabled: false, write: [] } },
			}),
		);
		expect(second.planner).toEqual({
			command: ["p"],
			env: { A: "1", B: "2" },
			documents: [
				{ document: "d1", checkout: score.path },
				{ document: "d2", checkout: other.path },
			],
			sandbox: { enabled: false, write: [] },
		});
		expect(next(second, score).planner?.sandbox.enabled).toBe(false);
		expect(next(second, score, options({ planner: { command: ["q"] } })).planner).toMatchObject({
			command: ["q"],
			sandbox: { enabled: true },
			documents: second.planner?.documents,
		});
	});

	test("Planner options without any command known: planner-command-missing (exit 2)", () => {
		expect(() => next(undefined, score, options({ planner: { documents: ["d1"] } }))).toThrow(
			expect.objectContaining({ code: "planner-command-missing", exitCode: 2 }),
		);
	});

	test("the default label is the host name, cleaned, or a fallback", () => {
		expect(defaultLabel("  box\u0007 ")).toBe("box");
		expect(defaultLabel("")).toBe("chopin machine");
		expect(defaultLabel("x".repeat(300))).toHaveLength(100);
	});
});
