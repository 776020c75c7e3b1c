import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, rmSync, statSync, writeFileSync } from "node:fs";
import { readChecked } from "../local/checked-files";
import type { IpcServer } from "../local/ipc";
import { ensurePrivateDir } from "../local/paths";
import { createTestContext, type TestContext } from "../testing/context";
import { TOKEN } from "../testing/credential";
import { pairForStatus, serveDaemonStatus } from "../testing/status";
import { gatherStatus, type StatusReport } from "./status-report";
import { statusReportSchema } from "./status-report-schema";

let ctx: TestContext;
let daemon: IpcServer | undefined;
let raw: { stop(force?: boolean): void } | undefined;
afterEach(async () => {
	await daemon?.close();
	daemon = undefined;
	raw?.stop(true);
	raw = undefined;
	ctx?.cleanup();
});

let SERVER: string;

function pair(): void {
	SERVER = pairForStatus(ctx);
}

async function startDaemon(version: string): Promise<void> {
	daemon = await serveDaemonStatus(ctx, SERVER, version);
}

/** A socket that answers every line with `answer`, as no daemon of ours would. */
function serveRaw(answer: unknown): void {
	ensurePrivateDir(ctx.paths.stateDir);
	raw = Bun.listen({
		unix: ctx.paths.socket,
		socket: {
			data(socket) {
				socket.write(`${JSON.stringify(answer)}\n`);
			},
		},
	});
}

/** The report is what the schema prints it as: same keys, same order, nothing extra. */
function expectPinned(report: StatusReport): void {
	expect(JSON.stringify(report)).toBe(JSON.stringify(statusReportSchema.parse(report)));
}

/**
 * Gathers the report with no record of checked files (the full checks, which record what they
 * accept), then again: both reports must be the same, and each is what the schema prints.
 */
async function fullThenRecorded(): Promise<{ full: StatusReport; recorded: StatusReport }> {
	rmSync(ctx.paths.checkedFile, { force: true });
	const full = await gatherStatus(ctx);
	const recorded = await gatherStatus(ctx);
	expectPinned(full);
	expectPinned(recorded);
	expect(recorded).toEqual(full);
	return { full, recorded };
}

describe("gatherStatus: the credential", () => {
	test("says what is stored, never the token", async () => {
		ctx = createTestContext();
		expect((await gatherStatus(ctx)).credential).toEqual({ stored: false, file: ctx.paths.credentialFile });
		pair();
		const { recorded } = await fullThenRecorded();
		expect(recorded.credential).toEqual({
			stored: true,
			valid: true,
			file: ctx.paths.credentialFile,
			server: SERVER,
			machineId: "mch_123",
			createdAt: "2026-01-01T00:00:00.000Z",
		});
		expect(JSON.stringify(recorded)).not.toContain(TOKEN);
		expect(JSON.stringify(recorded)).not.toContain("chopin_m_");
	});

	test("a damaged file is described, not thrown, and its content is not echoed", async () => {
		ctx = createTestContext();
		pair();
		writeFileSync(ctx.paths.credentialFile, `{"token":"${TOKEN}"`);
		const { recorded } = await fullThenRecorded();
		expect(recorded.credential).toMatchObject({ stored: true, valid: false });
		expect(JSON.stringify(recorded)).not.toContain(TOKEN);
		expect(readChecked(ctx.paths, ctx.paths.credentialFile).state).toBe("unchecked");
	});

	test("read from the record, the token is still registered as a secret", async () => {
		ctx = createTestContext();
		pair();
		await gatherStatus(ctx);
		expect(readChecked(ctx.paths, ctx.paths.credentialFile).state).toBe("trusted");
		const fresh = createTestContext({
			env: { CHOPIN_STATE_DIR: ctx.paths.stateDir, CHOPIN_CONFIG_DIR: ctx.paths.configDir },
		});
		try {
			await gatherStatus(fresh);
			expect(fresh.secrets.redact(`token ${TOKEN}`)).not.toContain(TOKEN);
		} finally {
			fresh.cleanup();
		}
	});

	test("a credential readable by others is put back to 0600 by the full check", async () => {
		ctx = createTestContext();
		pair();
		chmodSync(ctx.paths.credentialFile, 0o644);
		expect((await gatherStatus(ctx)).credential).toMatchObject({ stored: true, valid: true });
		expect(statSync(ctx.paths.credentialFile).mode & 0o777).toBe(0o600);
	});
});

describe("gatherStatus: recorded files and the full checks agree", () => {
	test("not paired", async () => {
		ctx = createTestContext();
		const { recorded } = await fullThenRecorded();
		expect(recorded.credential.stored).toBe(false);
		expect(recorded.daemon).toEqual({ running: false, problem: null, lastExit: null });
	});

	test("paired, with a daemon of this version: the files are read from the record", async () => {
		ctx = createTestContext();
		pair();
		await startDaemon(ctx.version);
		const { recorded } = await fullThenRecorded();
		expect(readChecked(ctx.paths, ctx.paths.credentialFile).state).toBe("trusted");
		expect(readChecked(ctx.paths, ctx.paths.machineConfigFile).state).toBe("trusted");
		expect(recorded.daemon).toMatchObject({ running: true, pid: 777, restartPending: false });
		expect(recorded.config).toMatchObject({ configured: true, planner: { envKeys: ["API_KEY"] } });
	});

	test("a daemon of another version is checked in full", async () => {
		ctx = createTestContext();
		pair();
		await startDaemon("0.0.9");
		const { recorded } = await fullThenRecorded();
		expect(recorded.daemon).toMatchObject({ running: true, version: "0.0.9", restartPending: true });
	});

	test("an answer in an unknown form from another version is a problem, not a crash", async () => {
		ctx = createTestContext();
		pair();
		serveRaw({ type: "status", status: { version: "0.0.9", pid: "not a number" } });
		const { recorded } = await fullThenRecorded();
		expect(recorded.daemon).toEqual({
			running: false,
			problem: "The chopin daemon sent an answer in an unknown form.",
			lastExit: null,
		});
	});

	test("an error answer is a problem with the daemon's words", async () => {
		ctx = createTestContext();
		pair();
		serveRaw({ type: "error", code: "daemon-request-failed", message: "It broke." });
		expect((await gatherStatus(ctx)).daemon).toEqual({
			running: false,
			problem: "It broke.",
			lastExit: null,
		});
	});

	test("a config edited by hand (a default left out) is checked in full every time, and described alike", async () => {
		ctx = createTestContext();
		pair();
		writeFileSync(
			ctx.paths.machineConfigFile,
			JSON.stringify({ version: 1, server: SERVER, label: "laptop", planner: { command: ["p"] } }),
		);
		const { recorded } = await fullThenRecorded();
		expect(readChecked(ctx.paths, ctx.paths.machineConfigFile).state).toBe("unchecked");
		expect(recorded.config).toMatchObject({
			configured: true,
			planner: { command: ["p"], envKeys: [], documents: [], sandbox: { enabled: true, write: [] } },
		});
	});

	test("a recorded config changed afterwards is checked again, and its problem said", async () => {
		ctx = createTestContext();
		pair();
		await gatherStatus(ctx);
		expect(readChecked(ctx.paths, ctx.paths.machineConfigFile).state).toBe("trusted");
		writeFileSync(ctx.paths.machineConfigFile, JSON.stringify({ version: 2 }));
		const report = await gatherStatus(ctx);
		expect(report.config).toMatchObject({ configured: false });
		expect("problem" in report.config && report.config.problem).toContain("not in the expected form");
		expectPinned(report);
	});
});
