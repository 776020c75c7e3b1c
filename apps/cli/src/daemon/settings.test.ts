import { describe, expect, test } from "bun:test";
import { sandboxKind } from "./sandbox-kind";
import { daemonSettings } from "./settings";

describe("daemon settings from the environment", () => {
	test("defaults, overrides, and a bad value refused naming the variable", () => {
		expect(daemonSettings({})).toEqual({
			silenceMs: 37_500,
			handshakeTimeoutMs: 10_000,
			probeMs: 5_000,
			retryMaxMs: 60_000,
		});
		expect(
			daemonSettings({
				CHOPIN_CONTROL_SILENCE_MS: "2500",
				CHOPIN_CONTROL_PROBE_MS: " ",
				CHOPIN_CONTROL_RETRY_MAX_MS: "6000",
			}),
		).toEqual({
			silenceMs: 2_500,
			handshakeTimeoutMs: 10_000,
			probeMs: 5_000,
			retryMaxMs: 6_000,
		});
		expect(() => daemonSettings({ CHOPIN_CONTROL_HANDSHAKE_MS: "soon" })).toThrow(
			expect.objectContaining({ code: "option-invalid", exitCode: 2 }),
		);
		expect(() => daemonSettings({ CHOPIN_CONTROL_SILENCE_MS: "5" })).toThrow(/CHOPIN_CONTROL_SILENCE_MS/);
	});
});

describe("the sandbox kind the hello reports", () => {
	test("per platform, when the tool is there, and none (with why) otherwise", () => {
		const has = (command: string) => `/usr/bin/${command}`;
		const none = () => null;
		expect(sandboxKind({ platform: "linux", enabled: true, which: has })).toEqual({ kind: "bwrap" });
		expect(sandboxKind({ platform: "linux", enabled: true, which: none }).reason).toContain("bubblewrap");
		expect(sandboxKind({ platform: "darwin", enabled: true, which: has })).toEqual({ kind: "sandbox-exec" });
		expect(sandboxKind({ platform: "win32", enabled: true, which: has }).kind).toBe("none");
		expect(sandboxKind({ platform: "linux", enabled: false, which: has })).toEqual({
			kind: "none",
			reason: "turned off with --no-sandbox",
		});
	});
});
