import { describe, expect, test } from "bun:test";
import { JSON_TOO_DEEP_MESSAGE } from "../json-depth";
import {
	CLIENT_HEADER,
	compareVersions,
	encodeMachineClientMessage,
	encodeMachineServerMessage,
	errorBodySchema,
	formatClientHeader,
	MACHINE_MAX_FRAME_BYTES,
	MACHINE_REFUSALS,
	type MachineClientMessage,
	type MachineServerMessage,
	machineInfoSchema,
	pairingClaimedSchema,
	pairingConfirmedSchema,
	pairingStartSchema,
	parseClientHeader,
	parseMachineClientFrame,
	parseMachineServerFrame,
	upgradeCommand,
} from "./index";

const hello: MachineClientMessage = {
	type: "hello",
	version: 1,
	checkouts: [{ path: "/home/ana/score", repository: "octo/score", origin: "git@github.com:octo/score.git" }],
	runs: [],
	planners: [
		{
			document: "d1",
			state: "running",
			worktree: "/home/ana/.local/share/chopin/planners/octo/score/d1",
			checkout: "/home/ana/score",
			pid: 4242,
			since: 1_700_000_000_000,
			restarts: 0,
			sandbox: "bwrap",
		},
	],
	sandbox: { kind: "bwrap" },
};

describe("control channel frames", () => {
	test("a hello round-trips through encode and parse", () => {
		const parsed = parseMachineClientFrame(encodeMachineClientMessage(hello));
		expect(parsed).toEqual({ ok: true, message: hello });
	});

	test("unknown fields, binary frames, bad JSON and oversized frames are refused with a code", () => {
		const extra = parseMachineClientFrame(JSON.stringify({ ...hello, secret: 1 }));
		expect(extra.ok).toBe(false);
		if (!extra.ok) expect(extra.error.code).toBe("malformed-message");
		const binary = parseMachineClientFrame(new Uint8Array([1]));
		expect(binary.ok || binary.error.message).toBe("Binary frames are not accepted.");
		expect(parseMachineServerFrame("{").ok).toBe(false);
		const big = parseMachineClientFrame(`"${"é".repeat(MACHINE_MAX_FRAME_BYTES / 2)}"`);
		expect(big.ok || big.error.code).toBe("message-too-large");
	});

	test("a frame nested deeper than MAX_JSON_DEPTH is malformed-message, both ways", () => {
		const deep = `{"type":"hello","version":1,"checkouts":${"[".repeat(9000)}${"]".repeat(9000)}}`;
		const refusal = {
			ok: false,
			error: { code: "malformed-message", message: JSON_TOO_DEEP_MESSAGE },
		} as const;
		expect(parseMachineClientFrame(deep)).toEqual(refusal);
		expect(parseMachineServerFrame(deep.replace("hello", "planners"))).toEqual(refusal);
	});

	test("server messages: welcome, planners, revoked, restarting", () => {
		const welcome: MachineServerMessage = {
			type: "welcome",
			machine: { id: "mch_1", label: "ana's laptop", owner: "ana", autoRun: false },
			repositories: [{ repository: "octo/score", access: "ok" }],
			planners: [
				{ document: { id: "d1", url: "http://127.0.0.1/d/d1", title: "Plan", repository: "octo/score" } },
			],
		};
		const messages: MachineServerMessage[] = [
			welcome,
			{ type: "planners", planners: [] },
			{ type: "revoked", code: "machine-revoked", message: "This machine was disconnected." },
			{ type: "restarting", reconnectWithinMs: 10_000 },
		];
		for (const message of messages) {
			expect(parseMachineServerFrame(encodeMachineServerMessage(message))).toEqual({ ok: true, message });
		}
		expect(() => encodeMachineServerMessage({ type: "revoked", code: "nope" } as never)).toThrow();
	});
});

describe("HTTP bodies", () => {
	test("pairing start needs a label, checkouts and the client", () => {
		const body = {
			label: "laptop",
			checkouts: [{ path: "/src/score", repository: "octo/score" }],
			client: { version: "0.1.0", os: "linux", arch: "x64", install: "source" },
		};
		expect(pairingStartSchema.safeParse(body).success).toBe(true);
		expect(pairingStartSchema.safeParse({ ...body, checkouts: [] }).success).toBe(false);
		expect(pairingStartSchema.safeParse({ ...body, label: "" }).success).toBe(false);
	});

	test("a claim is pending or returns a machine credential of the documented shape", () => {
		expect(pairingClaimedSchema.safeParse({ status: "pending", expiresAt: 1 }).success).toBe(true);
		const credential = `chopin_m_${"a".repeat(43)}`;
		const machine = { id: "mch_1", label: "l", owner: "ana" };
		expect(pairingClaimedSchema.safeParse({ status: "claimed", credential, machine }).success).toBe(true);
		expect(
			pairingClaimedSchema.safeParse({ status: "claimed", credential: "chopin_m_short", machine }).success,
		).toBe(false);
		expect(
			machineInfoSchema.safeParse({
				machine: { ...machine, autoRun: true, repositories: ["octo/score"], createdAt: 5 },
			}).success,
		).toBe(true);
	});
});

describe("client identity and versions", () => {
	test("the Chopin-Client header round-trips and rejects other shapes", () => {
		const client = { version: "1.2.3", os: "darwin", arch: "arm64", install: "npm" } as const;
		expect(CLIENT_HEADER).toBe("Chopin-Client");
		expect(formatClientHeader(client)).toBe("chopin/1.2.3 (darwin-arm64; npm)");
		expect(parseClientHeader(formatClientHeader(client))).toEqual(client);
		expect(parseClientHeader("curl/8.0")).toBeUndefined();
		expect(parseClientHeader("chopin/x (linux-x64; npm)")).toBeUndefined();
		expect(parseClientHeader(null)).toBeUndefined();
	});

	test("versions compare numerically with pre-releases first", () => {
		expect(compareVersions("0.10.0", "0.9.9")).toBe(1);
		expect(compareVersions("1.0.0", "1.0.0")).toBe(0);
		expect(compareVersions("1.0.0-rc.1", "1.0.0")).toBe(-1);
		expect(compareVersions("1.0.0", "1.0.1")).toBe(-1);
	});

	test("the upgrade command depends on how chopin was installed", () => {
		expect(upgradeCommand("npm", "1.2.0", "https://c.example")).toBe("npm install -g @chopin/cli@1.2.0");
		expect(upgradeCommand("pnpm", "1.2.0", "https://c.example")).toBe("pnpm add -g @chopin/cli@1.2.0");
		expect(upgradeCommand("yarn", "1.2.0", "https://c.example")).toBe("yarn global add @chopin/cli@1.2.0");
		expect(upgradeCommand("bun", "1.2.0", "https://c.example")).toBe("bun add -g @chopin/cli@1.2.0");
		expect(parseClientHeader("chopin/1.2.3 (linux-x64; pnpm)")?.install).toBe("pnpm");
		expect(upgradeCommand("script", "1.2.0", "https://c.example")).toContain("https://c.example/install.sh");
		expect(upgradeCommand("source", "1.2.0", "https://c.example")).toBe("git pull --ff-only && bun install");
		expect(upgradeCommand("script", "1.2.0", "https://c.example")).toBe(
			"curl -fsSL https://c.example/install.sh | CHOPIN_VERSION=1.2.0 sh",
		);
		expect(upgradeCommand("binary", "1.2.0", "https://c.example", "win32")).toContain("install.ps1 | iex");
	});

	test("every refusal is final and has a distinct close code", () => {
		const closes = Object.values(MACHINE_REFUSALS).map((r) => r.close);
		expect(new Set(closes).size).toBe(closes.length);
		expect(Object.values(MACHINE_REFUSALS).every((r) => r.final)).toBe(true);
	});
});

describe("answers the server gives", () => {
	test("the confirm answers with the machine, or where to send the browser for a GitHub grant", () => {
		const machine = { id: "mch_1", label: "laptop", owner: "ana", autoRun: false };
		expect(pairingConfirmedSchema.safeParse({ status: "confirmed", machine }).success).toBe(true);
		expect(
			pairingConfirmedSchema.safeParse({
				status: "authorize",
				location: "/auth/github/start?intent=machine-pairing&next=%2Fpair%2Fprg_1",
			}).success,
		).toBe(true);
		expect(pairingConfirmedSchema.safeParse({ status: "authorize" }).success).toBe(false);
	});

	test("an error body is read for what a client needs, whatever else the server adds", () => {
		const parsed = errorBodySchema.parse({
			code: "rate-limited",
			message: "Too many pairing attempts from here.",
			hint: "Wait 6 seconds and try again.",
			retryAfter: 6,
			field: "secret",
		});
		expect(parsed).toEqual({
			code: "rate-limited",
			message: "Too many pairing attempts from here.",
			hint: "Wait 6 seconds and try again.",
			retryAfter: 6,
		});
		expect(
			errorBodySchema.parse({ code: "subprotocol-required", message: "", supported: ["chopin.machine.v1"] })
				.supported,
		).toEqual(["chopin.machine.v1"]);
		expect(errorBodySchema.safeParse({ message: "no code" }).success).toBe(false);
	});
});
