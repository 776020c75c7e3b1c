import { afterEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { loadCredential, saveCredential } from "../machine/credential";
import { CliError } from "../program/errors";
import { runCli } from "../program/program";
import { closedOrigin } from "../testing/closed-port";
import { createTestContext, type TestContext } from "../testing/context";
import { sampleCredential, TOKEN } from "../testing/credential";
import { lockCheckout } from "./lock";

let ctx: TestContext;
afterEach(() => ctx?.cleanup());

function logText(): string {
	try {
		return readFileSync(ctx.paths.logFile, "utf8");
	} catch {
		return "";
	}
}

function filesUnder(dir: string): string[] {
	try {
		return readdirSync(dir).flatMap((name) => {
			const path = join(dir, name);
			return statSync(path).isDirectory() ? filesUnder(path) : [path];
		});
	} catch {
		return [];
	}
}

describe("the machine token", () => {
	test("appears in no output, no log line and no file but credential.json, whatever runs", async () => {
		ctx = createTestContext({ tty: true, log: { level: "trace", echoLevel: "trace" } });
		// Nothing listens there: every call to the server (status, disconnect, the daemon) is refused on loopback.
		saveCredential(ctx, sampleCredential({ server: closedOrigin() }));
		const credential = loadCredential(ctx)!;
		const argvs = [
			["--version"],
			["--help"],
			["status"],
			["status", "--json"],
			["logs", "-n", "1000"],
			["logs", "--json"],
			["connect", "--env", "API_KEY=value-of-the-key", "--", "gemini", "--acp"],
			["connect", "--server", "http://x.example"],
			["service", "install"],
		];
		for (const argv of argvs)
			await runCli(argv, ctx).catch((error: Error) => ctx.stderr.write(`${error.message}\n`));
		// The daemon, with the credential as its bearer: its first attempt is refused, then Ctrl-C.
		const stop = new AbortController();
		const daemon = runCli(["run"], { ...ctx, signal: stop.signal }).catch((error: Error) =>
			ctx.stderr.write(`${error.message}\n`),
		);
		while (!logText().includes("control channel down")) await Bun.sleep(5);
		stop.abort(new CliError("interrupted", "Interrupted."));
		await daemon;
		// disconnect, offline: it says the server was not reached, and forgets the credential.
		await runCli(["disconnect"], ctx);
		expect(ctx.stderr.text()).toContain("warning: could not reach");
		saveCredential(ctx, credential);
		// Code that slips and logs the credential, in every way it might, is still masked.
		ctx.log.info({ credential }, "credential loaded");
		ctx.log.warn(`token=${credential.token}`);
		ctx.log.error({ err: new Error(`refused ${credential.token}`) }, "request failed");
		ctx.log.debug({ headers: { authorization: `Bearer ${credential.token}` } }, "request");
		const lock = await lockCheckout({ locksDir: ctx.paths.locksDir }, "/src/score");
		await runCli(["logs", "-n", "1000"], ctx).catch(() => {});
		await lock.release();

		expect(ctx.stdout.text()).not.toContain(TOKEN);
		expect(ctx.stderr.text()).not.toContain(TOKEN);
		expect(ctx.stderr.text()).toContain("[redacted]"); // the TTY echo saw it, masked
		const files = [...filesUnder(ctx.paths.stateDir), ...filesUnder(ctx.paths.configDir)];
		expect(files.some((file) => file.endsWith("chopin.log"))).toBe(true);
		for (const file of files) {
			if (file === ctx.paths.credentialFile) continue;
			expect({ file, leaks: readFileSync(file, "utf8").includes(TOKEN) }).toEqual({ file, leaks: false });
		}
		expect(readFileSync(ctx.paths.credentialFile, "utf8")).toContain(TOKEN);
	});
});
