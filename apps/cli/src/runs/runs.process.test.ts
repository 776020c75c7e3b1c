// Builds and investigations end to end: a person starts a run on the document's page (the real server's API), the
// real daemon claims it, makes its workspace, drives the scripted ACP agent (the ACP SDK's agent side) in the
// sandbox, the agent reports through Chopin's MCP tools over HTTP or the stdio bridge, and the run ends on the page;
// an investigation cannot push; a dropped control channel pauses every process of the run until a person resumes it.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { eventually, killCliProcesses, runCliProcess } from "../testing/cli-process";
import { git } from "../testing/git";
import { expectProbe, GIT_IDENTITY, HAS_BWRAP, secondCommit } from "../testing/isolation";
import {
	processesMatching,
	type RunSetup,
	setUpRuns,
	startDaemon,
	startDaemonOnTerminal,
} from "../testing/runs";
import { readRunRecord } from "../workspaces/run-record";

const SLOW = 60_000;
const setups: RunSetup[] = [];
const stops: (() => Promise<unknown>)[] = [];
afterEach(async () => {
	for (const stop of stops.splice(0)) await stop();
	await killCliProcesses();
	for (const s of setups.splice(0)) await s.close();
});

async function serve(options: Parameters<typeof setUpRuns>[0], env: Record<string, string> = {}) {
	const s = await setUpRuns(options);
	setups.push(s);
	const daemon = startDaemon(s.h, env);
	await eventually("the machine online", () => s.machines.online(s.machineId));
	return { s, daemon };
}

describe("a build on the machine", () => {
	test(
		"started on the page, it runs the agent in its own workspace, reports through MCP over HTTP and ends succeeded; its commit comes back to the checkout",
		async () => {
			const { s } = await serve({ agent: ["build"] });
			const { id } = await s.start("build", "Write BUILD.md.");
			const run = await s.until(id, "succeeded");
			expect(run).toMatchObject({
				kind: "build",
				pullRequests: [{ url: "https://github.com/octo/score/pull/7", title: "Build the plan" }],
				result: { outcome: "succeeded", summary: "Wrote BUILD.md." },
				stages: [expect.objectContaining({ name: "Edit", status: "completed" })],
				workspace: { branch: `chopin/${id}` },
			});
			const lines = await s.logLines(id);
			expect(lines).toContain("Read the brief (build): Write BUILD.md.");
			expect(lines).toContain("The agent started (MCP over http).");
			// The work is in the person's checkout under the connector's own namespace; their branch did not move.
			const ref = `refs/remotes/chopin/${id}/chopin/${id}`;
			await eventually("the branch brought back", async () =>
				(await git(s.h.checkout, "for-each-ref", "--format=%(refname)", ref)) === ref ? true : undefined,
			);
			expect(await git(s.h.checkout, "show", `${ref}:BUILD.md`)).toBe("Built by the scripted agent.");
			expect(await git(s.h.checkout, "rev-parse", `${ref}~1`)).toBe(s.base);
			expect(await git(s.h.checkout, "rev-parse", "main")).toBe(s.base);
			expect(await git(s.h.checkout, "status", "--porcelain")).toBe("");
			// Kept for inspection, and listed with its path.
			const record = readRunRecord(s.h.paths.stateDir, id)!;
			expect(record).toMatchObject({ status: "finished", branch: `chopin/${id}` });
			expect(existsSync(join(record.workspace, "BUILD.md"))).toBe(true);
			const status = await runCliProcess(["status", "--json"], s.h.env);
			const report = JSON.parse(status.stdout) as {
				runs: { id: string; worktree: string; status: string }[];
			};
			expect(report.runs).toContainEqual(
				expect.objectContaining({ id, worktree: record.workspace, status: "finished" }),
			);

			// Discarded on the page: the machine deletes its workspace; the commits brought back stay the person's.
			expect((await s.act(id, "discard")).status).toBe(200);
			await eventually("the workspace deleted", () => (existsSync(record.workspace) ? undefined : true));
			expect(readRunRecord(s.h.paths.stateDir, id)).toBeUndefined();
			expect(await git(s.h.checkout, "for-each-ref", "--format=%(refname)", ref)).toBe(ref);
			// The keep ref goes once the folder has (renamed away first, so nobody finds a half-deleted run).
			await eventually("the keep ref deleted", async () =>
				(await git(s.h.checkout, "for-each-ref", `refs/chopin/keep/run/${id}`)) === "" ? true : undefined,
			);
		},
		SLOW,
	);

	test(
		"an agent without HTTP MCP reaches Chopin through `chopin bridge` (this CLI, from source) over stdio",
		async () => {
			const { s } = await serve({ agent: ["build", "--no-http-mcp"] });
			const { id } = await s.start("build");
			await s.until(id, "succeeded");
			expect(await s.logLines(id)).toContain("The agent started (MCP over stdio).");
		},
		SLOW,
	);

	test(
		"an investigation's agent that tries to push is refused by its environment",
		async () => {
			const { s } = await serve({ agent: ["investigate"] });
			const { id } = await s.start("investigation", "Where is the README?");
			const run = (await s.until(id, "succeeded")) as { result: { summary: string } };
			expect(run.result.summary).toContain("The push was refused");
			expect(run.result.summary).toContain("chopin-investigation-no-push");
			expect(await git(s.h.checkout, "for-each-ref", "refs/heads/investigation-push")).toBe("");
		},
		SLOW,
	);

	test(
		"without a terminal a permission request is declined, never allowed",
		async () => {
			const { s } = await serve({ agent: ["permission"] });
			const { id } = await s.start("build");
			await s.until(id, "finished");
			const lines = await s.logLines(id);
			expect(lines).toContain(
				'Declined "Write PERMITTED.md (edit)": nobody can be asked on this machine (no terminal).',
			);
			expect(lines).toContain("permission: deny");
		},
		SLOW,
	);
});

describe.skipIf(!HAS_BWRAP)("isolation from inside a run", () => {
	test(
		"the run's real agent, in the sandbox: every write under the person's checkout fails, their branches, HEAD and index stay, git in the workspace works",
		async () => {
			const s = await setUpRuns({ agent: ["probe"] });
			setups.push(s);
			const other = await secondCommit(s.h.checkout);
			const person = () =>
				Promise.all([
					git(s.h.checkout, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags"),
					readFileSync(join(s.h.checkout, ".git", "HEAD"), "utf8"),
					readFileSync(join(s.h.checkout, ".git", "index")).toString("base64"),
					readFileSync(join(s.h.checkout, ".git", "config"), "utf8"),
					readFileSync(join(s.h.checkout, "SECOND.md"), "utf8"),
				]);
			const before = await person();
			startDaemon(s.h, { ...GIT_IDENTITY, PROBE_OTHER: other });
			await eventually("the machine online", () => s.machines.online(s.machineId));
			const base = await git(s.h.checkout, "rev-parse", "HEAD");
			const { id } = await s.start("build", "Probe.", base);
			const run = (await s.until(id, "succeeded")) as { result: { summary: string } };
			expectProbe(run.result.summary.trim().split("\n"));
			expect(await person()).toEqual(before);
			// What the agent committed reached the person as commits, under the connector's own namespace only.
			await eventually("the probe's branch brought back", async () =>
				(await git(s.h.checkout, "for-each-ref", `refs/remotes/chopin/${id}/probe/work`)) !== ""
					? true
					: undefined,
			);
		},
		SLOW,
	);
});

describe("a drop pauses the run and never answers", () => {
	test(
		"the control channel cut mid-run: every process of the run stops (T), the page says machine offline, then paused once it is back; only a resume continues it",
		async () => {
			const { s } = await serve({ agent: ["wait"], proxy: true });
			const { id } = await s.start("build");
			await eventually("the agent waiting", async () =>
				(await s.logLines(id)).includes("waiting for .continue"),
			);
			const agent = () => processesMatching(/acp-agent\.ts wait/);
			expect(agent().length).toBeGreaterThan(0);

			s.proxy!.cut();
			await eventually("every process of the agent stopped", () =>
				agent().length > 0 && agent().every((p) => p.state === "T") ? true : undefined,
			);
			await eventually("the page showing the machine offline", async () =>
				(await s.view(id)).displayStatus === "machine-offline" ? true : undefined,
			);

			s.proxy!.restore();
			const paused = await s.until(id, "paused");
			expect(paused.displayStatus).toBe("paused");
			// Back online, it is still stopped: nothing resumes it but a person.
			expect(agent().every((p) => p.state === "T")).toBe(true);

			expect((await s.act(id, "resume")).status).toBeLessThan(300);
			await s.until(id, "running");
			expect(agent().some((p) => p.state === "T")).toBe(false);
			const record = readRunRecord(s.h.paths.stateDir, id)!;
			writeFileSync(join(record.workspace, ".continue"), "");
			await s.until(id, "succeeded");
		},
		SLOW,
	);
});

describe("permission requests on the daemon's terminal", () => {
	test(
		"asked on the terminal; a drop withdraws the question (never answered), a resume asks it again, and the person's answer is the agent's",
		async () => {
			const s = await setUpRuns({ agent: ["permission"], proxy: true });
			setups.push(s);
			const daemon = startDaemonOnTerminal(s.h);
			stops.push(() => daemon.stop());
			await eventually("the machine online", () => s.machines.online(s.machineId));
			const { id } = await s.start("build");
			await daemon.waitFor(/asks permission: Write PERMITTED\.md \(edit\)/);

			s.proxy!.cut();
			await daemon.waitFor(/\(withdrawn: the connection to Chopin dropped, so run run_\w+ is paused/);
			s.proxy!.restore();
			await s.until(id, "paused");
			// Nothing answered it meanwhile: the agent has said nothing of an outcome.
			expect((await s.logLines(id)).some((line) => line.startsWith("permission: "))).toBe(false);

			expect((await s.act(id, "resume")).status).toBeLessThan(300);
			await daemon.waitFor(/asks permission: Write PERMITTED\.md \(edit\)/, 2);
			daemon.type("1\r");
			await s.until(id, "finished");
			const lines = await s.logLines(id);
			expect(lines).toContain("permission: allow");
			expect(lines).toContain("Answered on the terminal (Allow): Write PERMITTED.md (edit)");
			expect(existsSync(join(readRunRecord(s.h.paths.stateDir, id)!.workspace, "PERMITTED.md"))).toBe(true);
			expect(await daemon.stop()).toBe(0);
		},
		SLOW,
	);
});

describe("stopping what a run started", () => {
	test(
		"an agent whose children leave its group, hold its pipes and ignore SIGTERM: a stop from the page ends them all, and the daemon's own stop returns",
		async () => {
			const { s, daemon } = await serve({ agent: ["escape"] });
			const { id } = await s.start("build");
			await eventually("the escaped children", async () =>
				(await s.logLines(id)).includes("escaped children started"),
			);
			expect(processesMatching(/^sleep 30[12]$/).length).toBe(2);
			const asked = Date.now();
			expect((await s.act(id, "stop")).status).toBeLessThan(300);
			await s.until(id, "stopped");
			await eventually("nothing of the run left", () =>
				processesMatching(/^sleep 30[12]$/).length === 0 ? true : undefined,
			);
			expect(Date.now() - asked).toBeLessThan(6_000);

			// Again, ended by the daemon's stop this time.
			const second = await s.start("build");
			await eventually("the escaped children again", async () =>
				(await s.logLines(second.id)).includes("escaped children started"),
			);
			daemon.kill("SIGINT");
			expect(await daemon.exited).toBe(0);
			expect(processesMatching(/^sleep 30[12]$/)).toEqual([]);
			expect(readRunRecord(s.h.paths.stateDir, second.id)?.status).toBe("stopped");
		},
		SLOW,
	);
});
