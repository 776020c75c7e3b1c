import { afterEach, describe, expect, test } from "bun:test";
import { statusForClient } from "../daemon/status-for-client";
import { ensurePrivateDir } from "../local/paths";
import { runCli } from "../program/program";
import { runCliProcess, spawnCli } from "../testing/cli-process";
import { createTestContext, type TestContext } from "../testing/context";
import { sampleDaemonStatus } from "../testing/daemon-status";
import { pairForStatus, serveDaemonStatus } from "../testing/status";
import { askForStatus, statusReportRequest } from "./status-by-daemon";
import { statusReportSchema } from "./status-report-schema";

let ctx: TestContext;
const closing: { close(): unknown }[] = [];
afterEach(async () => {
	for (const c of closing.splice(0)) await c.close();
	ctx?.cleanup();
});

/** The environment a user's shell would give the real process: the context's, nothing of this test process. */
function processEnv(): Record<string, string> {
	return Object.fromEntries(Object.entries(ctx.env).filter((e): e is [string, string] => e[1] !== undefined));
}

/** What the command tree (the full path: it asks the daemon for its status and builds the report itself) prints. */
async function fullPath(argv: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
	const tree = createTestContext({ env: ctx.env });
	try {
		const error = await runCli(argv, tree).then(
			() => undefined,
			(thrown) => thrown,
		);
		const stderr = error ? `error: ${error.message}\n${error.hint ? `hint: ${error.hint}\n` : ""}` : "";
		return { stdout: tree.stdout.text(), stderr, code: error?.exitCode ?? 0 };
	} finally {
		tree.cleanup();
	}
}

/** A socket that accepts and never answers, like a daemon stuck in a long synchronous task. */
function silentDaemon(socket: string): { accepted: Promise<void>; close(): void } {
	let accept = () => {};
	const accepted = new Promise<void>((resolve) => {
		accept = resolve;
	});
	const listener = Bun.listen({ unix: socket, socket: { open: () => accept(), data: () => {} } });
	return { accepted, close: () => listener.stop(true) };
}

/** A socket that answers each request line with `answer(line)` and ends the connection. */
function answeringDaemon(socket: string, answer: (line: string) => string): { close(): void } {
	const listener = Bun.listen({
		unix: socket,
		socket: {
			data: (s, chunk) => {
				s.end(answer(new TextDecoder().decode(chunk).trim()));
			},
		},
	});
	return { close: () => listener.stop(true) };
}

describe("chopin status, built by the daemon", () => {
	test("a daemon of this version that knows whose machine it is builds it whole: the process prints what the command tree prints", async () => {
		ctx = createTestContext();
		const server = pairForStatus(ctx);
		const daemon = await serveDaemonStatus(ctx, server, ctx.version);
		closing.push(daemon);
		for (const argv of [["status"], ["status", "--json"]]) {
			daemon.requests.length = 0;
			const viaDaemon = await runCliProcess(argv, processEnv());
			// Asked once, for the whole status: nothing was gathered in the process.
			expect(daemon.requests).toEqual(["status-report"]);
			expect(viaDaemon).toEqual(await fullPath(argv));
		}
		const report = statusReportSchema.parse(
			JSON.parse((await runCliProcess(["status", "--json"], processEnv())).stdout),
		);
		// The client's own facts, not the daemon's: how it was installed, where its service definition would be.
		expect(report).toMatchObject({ installMethod: "source", account: { login: "ana", source: "daemon" } });
	});

	test("a problem the report shows ends the process as the full path does: its words on stderr, its exit code", async () => {
		ctx = createTestContext();
		const server = pairForStatus(ctx);
		const daemon = await serveDaemonStatus(ctx, server, ctx.version, {
			connection: {
				state: "waiting",
				since: "2026-01-01T00:00:00.000Z",
				lastContact: null,
				attempts: 3,
				lastError: "refused",
			},
		});
		closing.push(daemon);
		const viaDaemon = await runCliProcess(["status", "--json"], processEnv());
		expect(daemon.requests).toEqual(["status-report"]);
		expect(viaDaemon.code).toBe(4);
		expect(viaDaemon.stderr).toContain("runs but is not connected");
		expect(viaDaemon).toEqual(await fullPath(["status", "--json"]));
	});

	test("a daemon that cannot say whose machine it is yet declines: the process gathers it, asking the server itself", async () => {
		ctx = createTestContext();
		const server = pairForStatus(ctx);
		const daemon = await serveDaemonStatus(ctx, server, ctx.version, { machine: null });
		closing.push(daemon);
		const viaDaemon = await runCliProcess(["status", "--json"], processEnv());
		expect(daemon.requests).toEqual(["status-report", "status"]);
		const report = statusReportSchema.parse(JSON.parse(viaDaemon.stdout));
		// The server nobody listens on was asked, and refused at once.
		expect(report.account).toMatchObject({ login: null, source: "unknown" });
		expect(report.account.problem).not.toBeNull();
		expect(viaDaemon).toEqual(await fullPath(["status", "--json"]));
	});

	test("a daemon of another version declines: the full path says a restart is pending", async () => {
		ctx = createTestContext();
		const server = pairForStatus(ctx);
		const daemon = await serveDaemonStatus(ctx, server, "0.0.9");
		closing.push(daemon);
		const viaDaemon = await runCliProcess(["status", "--json"], processEnv());
		expect(daemon.requests).toEqual(["status-report", "status"]);
		expect(statusReportSchema.parse(JSON.parse(viaDaemon.stdout)).daemon).toMatchObject({
			running: true,
			version: "0.0.9",
			restartPending: true,
		});
		expect(viaDaemon).toEqual(await fullPath(["status", "--json"]));
	});

	test("an older daemon that does not know the request: its error is not shown, the full path runs", async () => {
		ctx = createTestContext();
		const server = pairForStatus(ctx);
		const status = sampleDaemonStatus({ pid: 777, version: ctx.version, server, logFile: ctx.paths.logFile });
		const lines: string[] = [];
		// What a daemon from before status-report answers: its request schema refuses the unknown type.
		const daemon = answeringDaemon(ctx.paths.socket, (line) => {
			const { type } = JSON.parse(line);
			lines.push(type);
			return `${JSON.stringify(
				type === "status"
					? { type: "status", status }
					: {
							type: "error",
							code: "daemon-request-invalid",
							message: "The request is not one the daemon knows.",
						},
			)}\n`;
		});
		closing.push(daemon);
		const viaDaemon = await runCliProcess(["status", "--json"], processEnv());
		expect(lines).toEqual(["status-report", "status"]);
		expect(viaDaemon.stderr).toBe("");
		expect(viaDaemon.code).toBe(0);
		expect(viaDaemon).toEqual(await fullPath(["status", "--json"]));
	});

	test("Ctrl-C while the daemon has not answered ends it as the full path does: `Interrupted.`, exit 130", async () => {
		ctx = createTestContext();
		pairForStatus(ctx);
		const daemon = silentDaemon(ctx.paths.socket);
		closing.push(daemon);
		const cli = spawnCli(["status", "--json"], processEnv());
		await daemon.accepted;
		cli.kill("SIGINT");
		expect(await cli.exited).toBe(130);
		expect({ stdout: cli.stdout(), stderr: cli.stderr() }).toEqual({
			stdout: "",
			stderr: "error: Interrupted.\n",
		});
	}, 30_000);

	test("a Ctrl-C before the connection opens still closes it once it opens: nothing keeps the process alive", async () => {
		ctx = createTestContext();
		ensurePrivateDir(ctx.paths.stateDir);
		let closed = () => {};
		const peerClosed = new Promise<void>((resolve) => {
			closed = resolve;
		});
		const listener = Bun.listen({
			unix: ctx.paths.socket,
			socket: { data: () => {}, close: () => closed() },
		});
		closing.push({ close: () => listener.stop(true) });
		const asked = askForStatus(ctx.paths.socket, "{}\n", 30);
		// Delivered to the listeners interrupts.ts installed, before Bun.connect's open.
		process.emit("SIGINT");
		expect(await asked).toBe("interrupted");
		await peerClosed;
	});

	test("a daemon that does not answer in time, closes, or answers something else is not believed", async () => {
		ctx = createTestContext();
		ensurePrivateDir(ctx.paths.stateDir);
		const socket = ctx.paths.socket;
		const request = `${JSON.stringify(statusReportRequest({ ...facts(), cwd: ctx.cwd }, true))}\n`;
		const silent = silentDaemon(socket);
		const started = performance.now();
		expect(await askForStatus(socket, request, 1)).toBeUndefined();
		expect(performance.now() - started).toBeGreaterThanOrEqual(900);
		silent.close();
		for (const answer of [
			"",
			"not json\n",
			`${JSON.stringify({ type: "status-report", output: null, declined: "no" })}\n`,
			`${JSON.stringify({ type: "status-report", output: { stdout: "x", stderr: "", exitCode: 1.5 } })}\n`,
			`${JSON.stringify({ type: "status", output: { stdout: "x", stderr: "", exitCode: 0 } })}\n`,
		]) {
			const daemon = answeringDaemon(socket, () => answer);
			expect({ answer, got: await askForStatus(socket, request) }).toEqual({ answer, got: undefined });
			daemon.close();
		}
		const output = { stdout: "a\n", stderr: "b\n", exitCode: 4 };
		closing.push(answeringDaemon(socket, () => `${JSON.stringify({ type: "status-report", output })}\n`));
		expect(await askForStatus(socket, request)).toEqual({ stdout: "a\n", stderr: "b\n", exitCode: 4 });
	});
});

function facts() {
	return {
		platform: ctx.platform,
		env: ctx.env,
		execPath: "/usr/local/bin/chopin",
		main: "/$bunfs/root/chopin",
	};
}

describe("the daemon's half (status-for-client.ts)", () => {
	/** The daemon's context: the test context, with the paths a process started in its environment finds. */
	function daemonCtx(): TestContext {
		ctx = createTestContext();
		pairForStatus(ctx);
		const { paths } = statusReportRequest({ ...facts(), cwd: ctx.cwd }, true);
		return Object.assign(ctx, { paths });
	}

	function request(
		change: (r: Record<string, unknown> & { paths: Record<string, string> }) => void = () => {},
	) {
		const r = JSON.parse(JSON.stringify(statusReportRequest({ ...facts(), cwd: ctx.cwd }, true)));
		change(r);
		return r;
	}

	const status = () => sampleDaemonStatus({ version: "0.1.0" });

	test("builds the report with the client's install method", async () => {
		const daemon = daemonCtx();
		const answer = await statusForClient(request(), daemon, status);
		expect(answer.output).not.toBeNull();
		const report = statusReportSchema.parse(JSON.parse(answer.output!.stdout));
		// A binary in /usr/local/bin, as the request's facts say; the daemon itself runs from source.
		expect(report.installMethod).toBe("binary");
		expect(daemon.installMethod).toBe("source");
	});

	test("declines whatever could make its answer differ from the client's own", async () => {
		const daemon = daemonCtx();
		const cases: [string, ReturnType<typeof request>, RegExp][] = [
			["another version", request((r) => (r.version = "0.2.0")), /runs chopin 0\.1\.0/],
			[
				"another credential file",
				request((r) => (r.paths.credentialFile = "/elsewhere/credential.json")),
				/paths/,
			],
			["a path left out", request((r) => delete r.paths.checkedFile), /paths/],
			["a path too many", request((r) => (r.paths.extra = "/x")), /paths/],
			[
				"another service definition",
				request((r) => (r.serviceDefinition = "/x/chopin.service")),
				/service definition/,
			],
		];
		for (const [why, r, declined] of cases) {
			const answer = await statusForClient(r, daemon, status);
			expect({ why, output: answer.output, declined: declined.test(answer.declined ?? "") }).toEqual({
				why,
				output: null,
				declined: true,
			});
		}
		const noMachine = await statusForClient(request(), daemon, () => ({ ...status(), machine: null }));
		expect(noMachine).toEqual({
			type: "status-report",
			output: null,
			declined: "the daemon has not heard whose machine this is yet",
		});
	});
});
