// The escapes, run by the real daemon (`chopin run`) against a real server, in this machine's containment and
// in the subreaper one: a backend that leaves a `setsid` child holding its pipes and a child ignoring SIGTERM is
// restarted when it exits; Ctrl-C and `chopin disconnect` return, its token file is gone and nothing of it is left.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { loadMachineConfig, saveMachineConfig } from "../machine/machine-config";
import { eventually, killCliProcesses, readLog, runCliProcess, spawnCli } from "../testing/cli-process";
import {
	type CliHome,
	type MachineServer,
	makeCliHome,
	pairHome,
	startMachineServer,
} from "../testing/machine-server";
import { isLiveProcess, liveTagged, newTag, TAG_VARIABLE } from "../testing/processes";
import { chooseContainment } from "./containment";

const STAND_IN = join(import.meta.dir, "..", "testing", "fixtures", "planner-backend.sh");
const SLOW = 60_000;
/** The issue: everything gone within 6 s of a stop (a bound on a real timer, never an equality). */
const BUDGET_MS = 6_000;

const servers: MachineServer[] = [];
const homes: CliHome[] = [];
const tags: string[] = [];
afterEach(async () => {
	await killCliProcesses();
	for (const tag of tags.splice(0)) for (const p of liveTagged(tag)) process.kill(p.pid, "SIGKILL");
	for (const s of servers.splice(0)) await s.server.close();
	for (const h of homes.splice(0)) rmSync(h.root, { recursive: true, force: true });
});

async function setup(backendEnv: Record<string, string>) {
	const machines = await startMachineServer({ env: { LOCAL_PLANNER_CREDENTIALS: "on" } });
	servers.push(machines);
	const h = await makeCliHome();
	homes.push(h);
	await pairHome(machines, h);
	const document = await machines.server.context.domain.documents.create({
		repository: "octo/score",
		title: "Launch plan",
		createdBy: "ana",
	});
	const tag = newTag();
	tags.push(tag);
	saveMachineConfig(h.paths, {
		...loadMachineConfig(h.paths)!,
		planner: {
			command: [STAND_IN],
			env: { [TAG_VARIABLE]: tag, BACKEND_ESCAPE: "1", ...backendEnv },
			documents: [{ document: document.id, checkout: h.checkout }],
			sandbox: { enabled: false, write: [] },
		},
	});
	const tokenFile = join(h.paths.stateDir, "tokens", document.id, "planner-token");
	return { machines, h, tag, tokenFile, documentId: document.id };
}

/** The backend's leftovers are all there: the setsid `sleep 301` on its pipes and the SIGTERM-ignoring loop. */
function leftovers(tag: string): number[] | undefined {
	const live = liveTagged(tag);
	const ok = live.some((p) => p.command === "sleep 301") && live.some((p) => p.command.includes("while :"));
	return ok ? live.map((p) => p.pid) : undefined;
}

/** Resolves once nothing tagged is alive, or says it was not so within the budget from now. */
async function goneWithinBudget(tag: string): Promise<boolean> {
	const deadline = performance.now() + BUDGET_MS;
	while (performance.now() < deadline) {
		if (liveTagged(tag).length === 0) return true;
		await Bun.sleep(20);
	}
	return liveTagged(tag).length === 0;
}

const machineMode = chooseContainment({ platform: "linux", becomeSubreaper: () => true }).mode;
const MODES: { name: string; env: Record<string, string> }[] = [
	{ name: machineMode, env: {} },
	...(machineMode === "subreaper" ? [] : [{ name: "subreaper", env: { CHOPIN_CONTAINMENT: "subreaper" } }]),
];

for (const mode of MODES) {
	describe(`the daemon's backends, contained by ${mode.name}`, () => {
		test(
			"Ctrl-C: the daemon's stop returns, the token file is deleted, nothing the backend started is left",
			async () => {
				const { h, tag, tokenFile } = await setup({});
				const daemon = spawnCli(["run"], { ...h.env, ...mode.env });
				await daemon.waitFor(/Connected to/);
				await eventually("the backend's leftovers", () => existsSync(tokenFile) && leftovers(tag));
				const chosen = readLog(h.paths.logFile).find((l) => l.containment);
				expect(chosen?.containment).toBe(mode.name);
				daemon.kill("SIGINT");
				expect(await goneWithinBudget(tag)).toBe(true);
				expect(await daemon.exited).toBe(0);
				expect(existsSync(tokenFile)).toBe(false);
				expect(liveTagged(tag)).toEqual([]);
			},
			SLOW,
		);

		test(
			"`chopin disconnect`: returns 0, the daemon stops, the token file is deleted, nothing is left",
			async () => {
				const { h, tag, tokenFile } = await setup({ BACKEND_IGNORE_TERM: "1" });
				const daemon = spawnCli(["run"], { ...h.env, ...mode.env });
				await daemon.waitFor(/Connected to/);
				await eventually("the backend's leftovers", () => existsSync(tokenFile) && leftovers(tag));
				const disconnect = runCliProcess(["disconnect"], h.env);
				// The budget runs from the daemon's stop, not from the start of a CLI process on a loaded machine.
				await eventually("the daemon's stop", () =>
					readLog(h.paths.logFile).some((l) => l.msg === "stopping"),
				);
				expect(await goneWithinBudget(tag)).toBe(true);
				expect((await disconnect).code).toBe(0);
				expect(await daemon.exited).toBe(0);
				expect(existsSync(tokenFile)).toBe(false);
				expect(liveTagged(tag)).toEqual([]);
			},
			SLOW,
		);

		test(
			"a backend that exits leaving them is started again (exited, then started); its state and pid are right meanwhile",
			async () => {
				const { machines, h, tag, tokenFile, documentId } = await setup({ BACKEND_EXIT: "0" });
				const daemon = spawnCli(["run"], { ...h.env, ...mode.env });
				await daemon.waitFor(/Connected to/);
				const stoppedLine = "the Planner backend stopped: it exited with code 0";
				// Between its exit and its restart: backoff, no pid, the exit as reason (outside a PID namespace
				// this lasts while the SIGTERM-ignoring loop it left is stopped).
				const report = await eventually(
					"backoff in status",
					async () => {
						const r = JSON.parse((await runCliProcess(["status", "--json"], h.env)).stdout);
						return r.planners[0]?.state === "backoff" && r;
					},
					20_000,
				);
				expect(report.planners[0].pid).toBeUndefined();
				expect(report.planners[0].reason).toBe("the backend stopped: it exited with code 0");
				const left = liveTagged(tag).map((p) => p.pid);
				const starts = () =>
					readLog(h.paths.logFile).filter((l) => /^started the Planner backend/.test(String(l.msg))).length;
				const before = starts();
				await eventually("the restart", () => starts() > before, 20_000);
				// Nothing it left was alive when it started again (those pids were all the first launch's).
				expect(left.filter(isLiveProcess)).toEqual([]);
				const messages = readLog(h.paths.logFile).map((l) => String(l.msg));
				const exitAt = messages.indexOf(stoppedLine);
				const restartAt = messages.findIndex((m, i) => i > exitAt && /^started the Planner backend/.test(m));
				expect(exitAt).toBeGreaterThan(-1);
				expect(restartAt).toBeGreaterThan(exitAt);
				// The server heard it too: the backend exited, then started again.
				const activity = await eventually("the server's view", () => {
					const a = machines.server.context.machines.usage.activity(documentId);
					return a && a.exitsInRow >= 1 && a;
				});
				expect(activity.exitsInRow).toBeGreaterThanOrEqual(1);
				daemon.kill("SIGINT");
				expect(await daemon.exited).toBe(0);
				expect(existsSync(tokenFile)).toBe(false);
				expect(liveTagged(tag)).toEqual([]);
			},
			SLOW,
		);
	});
}
