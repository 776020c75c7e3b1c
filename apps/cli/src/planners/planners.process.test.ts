// The daemon (`chopin run` as a real process) running Planner backends against a real server: the example
// backend answers an @chopin message; a backend that is killed comes back with a fresh credential and its
// SIGTERM-ignoring grandchild is gone; revoking the machine stops it and deletes its token files; its output
// is masked; the sandbox keeps the checkout and its .git read-only and the workspace writable; status shows it all.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { isAlive } from "../local/process-liveness";
import { loadMachineConfig, saveMachineConfig } from "../machine/machine-config";
import { eventually, killCliProcesses, readLog, runCliProcess, spawnCli } from "../testing/cli-process";
import {
	type CliHome,
	type MachineServer,
	makeCliHome,
	pairHome,
	startMachineServer,
} from "../testing/machine-server";
import { liveTagged, newTag, TAG_VARIABLE } from "../testing/processes";

const REPO = join(import.meta.dir, "..", "..", "..", "..");
const STAND_IN = join(import.meta.dir, "..", "testing", "fixtures", "planner-backend.sh");
const ECHO = join(REPO, "examples", "planner-echo", "src", "main.ts");
const SLOW = 60_000;

const servers: MachineServer[] = [];
const homes: CliHome[] = [];
afterEach(async () => {
	await killCliProcesses();
	for (const s of servers.splice(0)) await s.server.close();
	for (const h of homes.splice(0)) rmSync(h.root, { recursive: true, force: true });
});

interface Setup {
	machines: MachineServer;
	h: CliHome;
	documentId: string;
	machineId: string;
	tokenFile: string;
	/** In every process of the backend's environment (an --env value), however it left its group. */
	tag: string;
}

async function setup(options: {
	command: string[];
	env?: Record<string, string>;
	sandbox?: boolean;
	write?: string[];
	/** Whether the document is named with --planner (else only the server may assign it). */
	configured?: boolean;
}): Promise<Setup> {
	const machines = await startMachineServer({ env: { LOCAL_PLANNER_CREDENTIALS: "on" } });
	servers.push(machines);
	const h = await makeCliHome();
	homes.push(h);
	const { machineId } = await pairHome(machines, h);
	const document = await machines.server.context.domain.documents.create({
		repository: "octo/score",
		title: "Launch plan",
		createdBy: "ana",
	});
	const config = loadMachineConfig(h.paths)!;
	const tag = newTag();
	saveMachineConfig(h.paths, {
		...config,
		planner: {
			command: options.command,
			env: { [TAG_VARIABLE]: tag, ...options.env },
			documents: options.configured === false ? [] : [{ document: document.id, checkout: h.checkout }],
			sandbox: { enabled: options.sandbox ?? false, write: options.write ?? [] },
		},
	});
	const tokenFile = join(h.paths.stateDir, "tokens", document.id, "planner-token");
	return { machines, h, documentId: document.id, machineId, tokenFile, tag };
}

const logged = (h: CliHome, msg: string) => readLog(h.paths.logFile).filter((l) => l.msg === msg);
const logText = (h: CliHome) => readFileSafe(h.paths.logFile);
const backendLines = (h: CliHome) =>
	readLog(h.paths.logFile)
		.filter((l) => l.stream === "stdout" || l.stream === "stderr")
		.map((l) => String(l.msg));

/** The daemon's "started the Planner backend" line, once its log has it (the log is written asynchronously). */
const startedLine = (h: CliHome) =>
	eventually("the backend's start in the log", () =>
		readLog(h.paths.logFile).find((l) => l.pid && /^started the Planner backend/.test(String(l.msg))),
	);

async function status(h: CliHome) {
	const result = await runCliProcess(["status", "--json"], h.env);
	return JSON.parse(result.stdout) as { planners: Record<string, unknown>[] };
}

describe("Planner backends run by the daemon", () => {
	test(
		"the example backend, launched in the sandbox, answers an @chopin message on the document",
		async () => {
			const { machines, h, documentId } = await setup({
				command: [process.execPath, ECHO],
				sandbox: Boolean(Bun.which("bwrap")),
			});
			const daemon = spawnCli(["run"], h.env);
			await daemon.waitFor(/Connected to/);
			const ask = (method: string, path: string, body?: unknown) =>
				fetch(new URL(path, machines.server.url), {
					method,
					headers: {
						origin: machines.target.publicUrl,
						cookie: machines.jar.header(),
						...(body === undefined ? {} : { "content-type": "application/json" }),
					},
					body: body === undefined ? undefined : JSON.stringify(body),
				});
			await eventually(
				"the backend attached",
				() => backendLines(h).some((l) => l.includes("attached")),
				SLOW,
			);
			const posted = await ask("POST", `/api/documents/${documentId}/messages`, { body: "@chopin hello" });
			expect(posted.status).toBe(201);
			const reply = await eventually(
				"the Planner's reply",
				async () => {
					const res = await ask("GET", `/api/documents/${documentId}/messages`);
					const { messages } = (await res.json()) as {
						messages: { role: string; status: string; body: string }[];
					};
					return messages.find((m) => m.role === "planner" && m.status === "done");
				},
				SLOW,
			);
			expect(reply.body).toContain("Echo: @chopin hello");
			const report = await status(h);
			expect(report.planners[0]).toMatchObject({
				document: documentId,
				state: "running",
				sandbox: Bun.which("bwrap") ? "bwrap" : "none",
			});
			const pid = Number(report.planners[0]?.pid);
			daemon.kill("SIGTERM");
			expect(await daemon.exited).toBe(0);
			// No orphan: the daemon stopped its backend's group and deleted its token file on the way out.
			expect(isAlive({ pid })).toBe(false);
			expect(existsSync(join(h.paths.stateDir, "tokens", documentId, "planner-token"))).toBe(false);
		},
		SLOW,
	);

	test(
		"a killed backend is started again with a fresh credential; its SIGTERM-ignoring grandchild is gone",
		async () => {
			const pidDir = await makeCliHome();
			homes.push(pidDir);
			const pidFile = join(pidDir.root, "grandchild.pid");
			const { h, tokenFile, tag } = await setup({
				command: [STAND_IN],
				env: { BACKEND_GRANDCHILD: pidFile },
			});
			const daemon = spawnCli(["run"], h.env);
			await daemon.waitFor(/Connected to/);
			await eventually("the grandchild", () => readFileSafe(pidFile).trim() !== "" && existsSync(tokenFile));
			// Its pid as this test sees it (the file may hold its pid in the backend's PID namespace).
			const grandchild = grandchildren(tag);
			expect(grandchild.length).toBeGreaterThan(0);
			const first = readFileSafe(tokenFile);
			const started = await startedLine(h);
			const backendPid = Number(started?.pid);
			expect(backendPid).toBeGreaterThan(0);
			process.kill(backendPid, "SIGKILL");
			// What it left is stopped (SIGTERM, then SIGKILL 5 s later) before the backend is started again.
			await eventually("the grandchild gone", () => grandchild.every((pid) => !isAlive({ pid })), 15_000);
			await eventually(
				"the restart with a fresh credential",
				() => existsSync(tokenFile) && readFileSafe(tokenFile) !== first && readFileSafe(tokenFile) !== "",
				15_000,
			);
			const report = await eventually("status after the restart", async () => {
				const r = await status(h);
				return r.planners[0]?.state === "running" && r.planners[0]?.restarts === 1 && r;
			});
			expect(report.planners[0]?.reason).toBeUndefined();
			const text = (await runCliProcess(["status"], h.env)).stdout;
			expect(text).toContain("1 restart");
			expect(text).toContain("no sandbox (turned off with --no-sandbox)");
		},
		SLOW,
	);

	test(
		"a second Ctrl-C ends the daemon at once, and takes all its backends started along (SIGKILL), grandchildren too",
		async () => {
			const pidDir = await makeCliHome();
			homes.push(pidDir);
			const pidFile = join(pidDir.root, "grandchild.pid");
			// The backend ignores SIGTERM too, so the graceful stop waits out the grace period.
			const { h, tag } = await setup({
				command: [STAND_IN],
				env: { BACKEND_GRANDCHILD: pidFile, BACKEND_IGNORE_TERM: "1" },
			});
			const daemon = spawnCli(["run"], h.env);
			await daemon.waitFor(/Connected to/);
			await eventually("the grandchild", () => readFileSafe(pidFile).trim() !== "");
			expect(grandchildren(tag).length).toBeGreaterThan(0);
			const started = await startedLine(h);
			// The first signal starts the graceful stop, which waits on the backend and grandchild ignoring SIGTERM;
			// the second (a terminal's Ctrl-C reaching the whole foreground group does this) ends it now.
			daemon.kill("SIGTERM");
			await eventually("the graceful stop under way", () => logged(h, "stopping").length > 0);
			daemon.kill("SIGINT");
			expect(await daemon.exited).toBe(130);
			await eventually("the backend and its grandchild gone", () => {
				return liveTagged(tag).length === 0 && !isAlive({ pid: Number(started?.pid) });
			});
		},
		SLOW,
	);

	test(
		"a backend printing its secrets JSON-escaped, URL-encoded or in base64 is logged masked",
		async () => {
			const secret = 'sek"rit/va lue+42&x';
			const { h, tokenFile } = await setup({
				command: [STAND_IN],
				env: { BACKEND_SECRET: secret, BACKEND_ENCODED: "1" },
			});
			const daemon = spawnCli(["run"], h.env);
			await daemon.waitFor(/Connected to/);
			await eventually("the token file", () => existsSync(tokenFile));
			const token = readFileSafe(tokenFile);
			const line = await eventually("the encoded line", () =>
				backendLines(h).find((l) => l.startsWith("encoded:")),
			);
			const b64 = (x: string) => Buffer.from(x).toString("base64");
			const forms = [
				JSON.stringify(secret).slice(1, -1),
				encodeURIComponent(secret),
				b64(secret),
				b64(token),
				Buffer.from(token).toString("base64url"),
				token,
			];
			for (const form of forms) expect(line).not.toContain(form);
			// Inside Basic user:secret, at most the characters that also carry "user:"'s bits are left.
			const basic = b64(`user:${secret}`);
			expect(line).not.toContain(basic.slice(8, -4));
			expect(line.match(/\[redacted\]/g)?.length).toBeGreaterThanOrEqual(7);
			const log = logText(h);
			for (const form of forms) expect(log).not.toContain(form);
			daemon.kill("SIGINT");
			expect(await daemon.exited).toBe(0);
		},
		SLOW,
	);

	test(
		"revoking the machine stops the backend and deletes its token files; its output never shows a secret",
		async () => {
			const { machines, h, tokenFile, machineId } = await setup({
				command: [STAND_IN],
				env: { BACKEND_SECRET: "sekrit-value-42" },
			});
			const daemon = spawnCli(["run"], h.env);
			await daemon.waitFor(/Connected to/);
			await eventually("the token file", () => existsSync(tokenFile));
			const token = readFileSafe(tokenFile);
			await eventually("the backend's output", () => backendLines(h).some((l) => l.startsWith("secrets:")));
			const started = await startedLine(h);
			expect((await machines.revoke(machineId)).status).toBe(204);
			expect(await daemon.exited).toBe(10);
			expect(existsSync(tokenFile)).toBe(false);
			expect(isAlive({ pid: Number(started?.pid) })).toBe(false);
			const lines = backendLines(h);
			expect(lines).toContain("secrets: token [redacted] from-file [redacted] env [redacted]");
			expect(lines).toContain("on stderr: [redacted]");
			const log = logText(h);
			expect(log).not.toContain(token);
			expect(log).not.toContain("sekrit-value-42");
			expect(daemon.stderr()).not.toContain(token);
			expect(log).toContain("Chopin refused the machine");
		},
		SLOW,
	);

	test(
		"a document the server assigns is run with its URL, and withdrawing it stops the backend and deletes its file",
		async () => {
			const { machines, h, documentId, machineId, tokenFile } = await setup({
				command: [STAND_IN],
				configured: false,
			});
			const daemon = spawnCli(["run"], h.env);
			await daemon.waitFor(/Connected to/);
			const assignments = machines.server.context.machines.assignments;
			expect(await assignments.assign(documentId, machineId, "ana")).toBe(true);
			await eventually("the assigned backend", () => existsSync(tokenFile));
			const url = `${machines.target.publicUrl}/d/${documentId}`;
			await eventually("its first line", () => backendLines(h).some((l) => l.startsWith("started pid=")));
			expect(backendLines(h).find((l) => l.startsWith("started pid="))).toContain(`document=${url} `);
			const report = await status(h);
			expect(report.planners[0]).toMatchObject({
				document: documentId,
				state: "running",
				title: "Launch plan",
			});
			await assignments.withdraw(documentId, "archived");
			await eventually("the file deleted", () => !existsSync(tokenFile));
			await eventually("the stop logged", () =>
				logText(h).includes("the document was withdrawn from this machine"),
			);
			expect(backendLines(h)).toContain("got TERM");
			// Every report and planner-event was one the server accepts.
			expect(JSON.stringify(machines.server.logs)).not.toContain("malformed");
			expect(logged(h, "control channel down")).toEqual([]);
		},
		SLOW,
	);

	test.skipIf(!Bun.which("bwrap"))(
		"in the sandbox the checkout and its .git refuse writes; the workspace (its own .git in it) takes them",
		async () => {
			const { h, documentId } = await setup({
				command: [STAND_IN],
				env: { BACKEND_WRITE: "1" },
				sandbox: true,
				write: [],
			});
			const daemon = spawnCli(["run"], h.env);
			await daemon.waitFor(/Connected to/);
			const worktree = join(h.paths.stateDir, "planners", "octo", "score", documentId);
			await eventually(
				"every write tried",
				() => backendLines(h).filter((l) => l.startsWith("write ")).length === 4,
			);
			expect(backendLines(h).filter((l) => l.startsWith("write "))).toEqual([
				`write refused ${h.checkout}/planner-was-here`,
				`write refused ${h.checkout}/.git/planner-was-here`,
				`write ok ${worktree}/planner-was-here`,
				`write ok ${worktree}/.git/planner-was-here`,
			]);
			expect(existsSync(join(h.checkout, "planner-was-here"))).toBe(false);
			expect(existsSync(join(h.checkout, ".git", "planner-was-here"))).toBe(false);
			expect(existsSync(join(worktree, "planner-was-here"))).toBe(true);
			// A workspace with its own git dir, not a linked worktree of the checkout.
			expect(statSync(join(worktree, ".git")).isDirectory()).toBe(true);
			expect(existsSync(join(h.checkout, ".git", "worktrees"))).toBe(false);
			expect(logged(h, "made the Planner's workspace, detached at the checkout's HEAD")).toHaveLength(1);
			expect((await status(h)).planners[0]).toMatchObject({ sandbox: "bwrap", worktree });
		},
		SLOW,
	);

	test(
		"`chopin connect --planner` given to a running daemon starts that document's backend at once",
		async () => {
			const { h, documentId, tokenFile } = await setup({ command: [STAND_IN], configured: false });
			const daemon = spawnCli(["run"], h.env);
			await daemon.waitFor(/Connected to/);
			expect((await status(h)).planners).toEqual([]);
			const connect = await runCliProcess(["connect", h.checkout, "--planner", documentId], h.env);
			expect(connect.code).toBe(0);
			expect(connect.stderr).toContain(
				`The running chopin daemon (pid ${daemon.pid}) now runs the Planner settings you gave.`,
			);
			await eventually("the backend running", async () => {
				const planners = (await status(h)).planners;
				return planners[0]?.state === "running" && existsSync(tokenFile);
			});
			// The same settings again: nothing restarts.
			const again = await runCliProcess(["connect", h.checkout, "--planner", documentId], h.env);
			expect(again.stderr).not.toContain("Planner settings");
		},
		SLOW,
	);
});

/** The live pids of the fixture's SIGTERM-ignoring grandchild (and its `sleep`), found by the test's tag. */
function grandchildren(tag: string): number[] {
	return liveTagged(tag)
		.filter((p) => p.command.includes("while :") || p.command === "sleep 1")
		.filter((p) => !p.command.includes("planner-backend"))
		.map((p) => p.pid);
}

function readFileSafe(path: string): string {
	try {
		return readFileSync(path, "utf8");
	} catch {
		return "";
	}
}
