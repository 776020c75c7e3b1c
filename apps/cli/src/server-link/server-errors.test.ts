import { describe, expect, test } from "bun:test";
import { upgradeCommand as serverUpgradeCommand } from "@chopin/agent-link/machine";
import { refusalError, retryAfterMs, versionRefused } from "./server-errors";

const upgrade = {
	installMethod: "binary" as const,
	execPath: "/opt/tools/chopin",
	selfCommand: ["/opt/tools/chopin"],
	platform: "linux" as const,
	home: "/home/ana",
};
const context = { server: "https://chopin.example", version: "0.1.0", upgrade };

/** The sentence the server sends (apps/server/src/machines/errors.ts), with its own command. */
const serverMessage = (need: string, command: string) =>
	`This Chopin server needs chopin ${need} or newer, and this machine runs 0.1.0: upgrade with \`${command}\`.`;

describe("client-version-refused", () => {
	test("names this install's own command with the version the server's command pins", () => {
		const message = serverMessage("0.3.0", serverUpgradeCommand("binary", "0.4.0", "https://chopin.example"));
		const error = versionRefused(message, context);
		expect(error.code).toBe("client-version-refused");
		expect(error.exitCode).toBe(12);
		// A standalone binary is reinstalled where it is, at the version the server named.
		const command =
			"curl -fsSL https://chopin.example/install.sh | CHOPIN_VERSION=0.4.0 CHOPIN_INSTALL_DIR=/opt/tools sh";
		expect(error.message).toBe(
			`https://chopin.example needs chopin 0.3.0 or newer, and this is chopin 0.1.0: upgrade with \`${command}\`.`,
		);
		expect(error.hint).toBe(`Run \`${command}\`, then start chopin again.`);
	});

	test("npm and Windows forms of the server's command give the version too; without one, the minimum", () => {
		const npm = versionRefused(serverMessage("1.2.0", "npm install -g @chopin/cli@1.3.0"), {
			...context,
			upgrade: { ...upgrade, installMethod: "npm" },
		});
		expect(npm.message).toContain("`npm install -g @chopin/cli@1.3.0`");
		const windows = versionRefused(
			serverMessage("1.2.0", serverUpgradeCommand("script", "1.2.5", "https://chopin.example", "win32")),
			{ ...context, upgrade: { ...upgrade, installMethod: "npm" } },
		);
		expect(windows.message).toContain("`npm install -g @chopin/cli@1.2.5`");
		const bare = versionRefused("This Chopin server needs chopin 2.0.0 or newer.", {
			...context,
			upgrade: { ...upgrade, installMethod: "npm" },
		});
		expect(bare.message).toContain("`npm install -g @chopin/cli@2.0.0`");
	});
});

describe("refusals as CliErrors", () => {
	test("the four final codes keep their exit codes; the rest are the server's own words", () => {
		expect(refusalError(401, { code: "machine-revoked", message: "x" }, context)).toMatchObject({
			code: "machine-revoked",
			exitCode: 10,
		});
		expect(refusalError(401, { code: "machine-reauthorize", message: "Pair again." }, context)).toMatchObject(
			{
				code: "machine-reauthorize",
				exitCode: 13,
			},
		);
		expect(refusalError(403, { code: "repository-access-lost", message: "No push." }, context).exitCode).toBe(
			11,
		);
		expect(refusalError(410, { code: "pairing-expired", message: "x" }, context).code).toBe(
			"pairing-expired",
		);
		expect(refusalError(409, { code: "pairing-claimed", message: "Handed out once." }, context).code).toBe(
			"pairing-refused",
		);
		const limited = refusalError(
			429,
			{ code: "rate-limited", message: "Too many.", hint: "Wait 6 seconds and try again.", retryAfter: 6 },
			context,
		);
		// The server's hint names the wait already: said once, not twice.
		expect(limited).toMatchObject({ code: "server-refused", hint: "Wait 6 seconds and try again." });
		expect(
			refusalError(429, { code: "rate-limited", message: "Too many.", retryAfter: 6 }, context).hint,
		).toBe("Try again in 6 s.");
		expect(limited.message).toBe("https://chopin.example refused the request (rate-limited): Too many.");
		expect(refusalError(503, undefined, context)).toMatchObject({ code: "server-unreachable" });
		expect(refusalError(502, undefined, context).message).toContain("it answered HTTP 502");
	});
});

describe("Retry-After", () => {
	test("seconds, an HTTP date, or the body's retryAfter; nothing when none says; capped at an hour", () => {
		const now = Date.parse("2026-01-01T00:00:00Z");
		expect(retryAfterMs("5", undefined, now)).toBe(5_000);
		expect(retryAfterMs("Thu, 01 Jan 2026 00:00:30 GMT", undefined, now)).toBe(30_000);
		expect(retryAfterMs(null, { code: "rate-limited", message: "x", retryAfter: 6 }, now)).toBe(6_000);
		expect(retryAfterMs(null, undefined, now)).toBeUndefined();
		expect(retryAfterMs("999999", undefined, now)).toBe(3_600_000);
	});
});
