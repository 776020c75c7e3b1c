import { describe, expect, test } from "bun:test";
import { upgradeCommand as serverUpgradeCommand } from "@chopin/agent-link/machine";
import { refusalError, versionRefused } from "./server-errors";

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
			{ code: "rate-limited", message: "Too many.", hint: "Wait.", retryAfter: 6 },
			context,
		);
		expect(limited).toMatchObject({ code: "server-refused", hint: "Wait. Try again in 6 s." });
		expect(limited.message).toBe("https://chopin.example refused the request (rate-limited): Too many.");
		expect(refusalError(503, undefined, context)).toMatchObject({ code: "server-unreachable" });
		expect(refusalError(502, undefined, context).message).toContain("it answered HTTP 502");
	});
});
