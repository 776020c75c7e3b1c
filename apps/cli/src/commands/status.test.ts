import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import type { IpcServer } from "../local/ipc";
import type { CliError } from "../program/errors";
import { runCli } from "../program/program";
import { statusReportSchema } from "../status/status-report-schema";
import { createTestContext, type TestContext } from "../testing/context";
import { TOKEN } from "../testing/credential";
import { parse } from "../testing/program";
import { ENV_VALUE, pairForStatus, serveDaemonStatus } from "../testing/status";

let ctx: TestContext;
let daemon: IpcServer | undefined;
afterEach(async () => {
	await daemon?.close();
	daemon = undefined;
	ctx?.cleanup();
});

/** Nothing listens there: status's call to the server is refused at once, and never leaves loopback. */
let SERVER: string;

function configure(): void {
	SERVER = pairForStatus(ctx);
}

async function startDaemon(
	version = "0.1.0",
	overrides: Parameters<typeof serveDaemonStatus>[3] = {},
): Promise<void> {
	daemon = await serveDaemonStatus(ctx, SERVER, version, overrides);
}

async function status(argv: string[] = []): Promise<CliError | undefined> {
	return runCli(["status", ...argv], ctx).then(
		() => undefined,
		(error) => error,
	);
}

describe("status: parse half", () => {
	test("--json is a boolean, off by default", async () => {
		ctx = createTestContext();
		expect(await parse(["status"], ctx)).toEqual({ command: "status", options: { json: false } });
		expect(await parse(["status", "--json"], ctx)).toEqual({ command: "status", options: { json: true } });
	});

	test("--help has examples and the exit statuses", async () => {
		ctx = createTestContext();
		await parse(["status", "--help"], ctx);
		expect(ctx.stdout.text()).toContain("Examples:");
		expect(ctx.stdout.text()).toContain("$ chopin status --json");
		expect(ctx.stdout.text()).toContain("3 when not paired");
	});
});

describe("status: run half", () => {
	test("not paired: says so and ends with not-paired (exit 3)", async () => {
		ctx = createTestContext();
		const error = await status();
		expect(error).toMatchObject({ code: "not-paired", exitCode: 3 });
		const out = ctx.stdout.text();
		expect(out).toContain("chopin 0.1.0 (installed with source)");
		expect(out).toContain("Paired:     no");
		expect(out).toContain("Daemon:     not running");
		expect(out).toContain(`Log:        ${ctx.paths.logFile}`);
	});

	test("paired with no daemon: not-connected (exit 4) naming the next command", async () => {
		ctx = createTestContext();
		configure();
		const error = await status();
		expect(error).toMatchObject({ code: "not-connected", exitCode: 4 });
		expect(error?.hint).toBe("Start it with `chopin run` or `chopin service install`.");
		const out = ctx.stdout.text();
		expect(out).toContain(`Paired:     yes, with ${SERVER} as machine mch_123`);
		expect(out).toContain("octo-org/score  /src/score  (not served by a daemon)");
		// No daemon to say whose machine it is, and the server cannot be reached: unknown, and why.
		expect(out).toContain(`Account:    unknown (Could not reach the Chopin server at ${SERVER}`);
		expect(out).toContain("Connection: none (no daemon)");
	});

	test("a daemon that is reconnecting: not-connected (exit 4) with its last error", async () => {
		ctx = createTestContext();
		configure();
		await startDaemon("0.1.0", {
			connection: {
				state: "waiting",
				since: "2026-01-01T00:00:05.000Z",
				lastContact: "2026-01-01T00:00:02.000Z",
				attempts: 3,
				nextAttemptAt: "2026-01-01T00:00:10.000Z",
				lastError: "could not connect: connect ECONNREFUSED",
			},
		});
		const error = await status();
		expect(error).toMatchObject({ code: "not-connected", exitCode: 4 });
		expect(error?.message).toContain("runs but is not connected");
		expect(ctx.stdout.text()).toContain(
			"Connection: reconnecting at 2026-01-01T00:00:10.000Z (attempt 4); last: could not connect",
		);
	});

	test("paired with a running daemon: exit 0, the daemon's view of the checkouts", async () => {
		ctx = createTestContext();
		configure();
		await startDaemon();
		expect(await status()).toBeUndefined();
		const out = ctx.stdout.text();
		expect(out).toContain("Daemon:     running, pid 777, version 0.1.0");
		expect(out).not.toContain("restart pending");
		expect(out).toContain('Account:    ana (machine mch_123 "laptop"), as the daemon says');
		expect(out).toContain(
			"octo-org/score  /src/score  (connected, last contact 2026-01-01T00:00:02.000Z, access ok)",
		);
		expect(out).toContain("ACP agent:  gemini --acp");
		expect(out).toContain("Planner:    my-planner (agent copilot)");
		expect(out).toContain("env API_KEY");
	});

	test("a daemon on another version: restart pending", async () => {
		ctx = createTestContext();
		configure();
		await startDaemon("0.0.9");
		await status();
		expect(ctx.stdout.text()).toContain("restart pending: it runs 0.0.9, 0.1.0 is installed");
	});

	test("--json prints only the report on stdout, valid against its schema", async () => {
		ctx = createTestContext();
		configure();
		await startDaemon();
		expect(await status(["--json"])).toBeUndefined();
		const report = statusReportSchema.parse(JSON.parse(ctx.stdout.text()));
		expect(report.daemon).toMatchObject({ running: true, pid: 777, restartPending: false });
		expect(report.credential).toMatchObject({ stored: true, valid: true, machineId: "mch_123" });
		expect(report.config).toMatchObject({ configured: true, planner: { envKeys: ["API_KEY"] } });
		expect(report.account).toEqual({ login: "ana", source: "daemon", problem: null });
		expect(report.connection.state).toBe("connected");
		expect(report.service).toMatchObject({ state: "not-installed", manager: "systemd" });
		expect(ctx.stderr.text()).toBe("");
	});

	test("the --json shape is pinned: these keys, every one always present (docs/cli.md)", async () => {
		ctx = createTestContext();
		configure();
		await startDaemon();
		await status(["--json"]);
		const report = statusReportSchema.parse(JSON.parse(ctx.stdout.text()));
		expect(Object.keys(report)).toEqual([
			"version",
			"installMethod",
			"server",
			"account",
			"machine",
			"credential",
			"config",
			"daemon",
			"connection",
			"checkouts",
			"runs",
			"planners",
			"logFile",
			"service",
		]);
		expect(Object.keys(report.connection)).toEqual([
			"state",
			"since",
			"lastContact",
			"attempts",
			"nextAttemptAt",
			"lastError",
		]);
		expect(report.checkouts).toEqual([
			{
				path: "/src/score",
				repository: "octo-org/score",
				origin: "git@github.com:octo-org/score.git",
				branch: null,
				served: true,
				state: "connected",
				lastContact: "2026-01-01T00:00:02.000Z",
				access: "ok",
			},
		]);
	});

	test("--json when not paired still prints the report, then fails with exit 3", async () => {
		ctx = createTestContext();
		const error = await status(["--json"]);
		expect(error?.code).toBe("not-paired");
		expect(statusReportSchema.parse(JSON.parse(ctx.stdout.text())).credential).toEqual({
			stored: false,
			file: ctx.paths.credentialFile,
		});
	});

	test("neither the token nor --env values are ever printed", async () => {
		ctx = createTestContext();
		configure();
		await startDaemon();
		await status();
		await status(["--json"]);
		const all = ctx.stdout.text() + ctx.stderr.text();
		expect(all).not.toContain(TOKEN);
		expect(all).not.toContain(ENV_VALUE);
	});

	test("damaged files are reported, and the exit names the problem", async () => {
		ctx = createTestContext();
		configure();
		writeFileSync(ctx.paths.machineConfigFile, "{");
		expect(await status()).toMatchObject({ code: "config-invalid" });
		expect(ctx.stdout.text()).toContain("Machine:    config unreadable");
		writeFileSync(ctx.paths.credentialFile, "{");
		expect(await status()).toMatchObject({ code: "credential-invalid" });
		expect(ctx.stdout.text()).toContain("Paired:     credential unreadable");
	});
});
