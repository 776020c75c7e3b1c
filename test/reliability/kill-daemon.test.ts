// kill -9 of the daemon and its backends at chosen points: the daemon mid-launch (a build's workspace and agent
// starting) and mid-renewal of its Planner's credential, and a backend mid-turn. Afterwards a new daemon takes the
// lock and connects with the same credential, the run is lost or failed with its sentence, nothing of it outlives
// the daemon, and the token file was never half-written.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { loadMachineConfig, saveMachineConfig } from "../../apps/cli/src/machine/machine-config";
import {
	type CliProcess,
	eventually,
	killCliProcesses,
	readLog,
} from "../../apps/cli/src/testing/cli-process";
import { HAS_BWRAP } from "../../apps/cli/src/testing/isolation";
import { makeCliHome, pairHome, startMachineServer } from "../../apps/cli/src/testing/machine-server";
import { processesMatching, type RunSetup, setUpRuns, startDaemon } from "../../apps/cli/src/testing/runs";
import { countsFor } from "./support/counts";
import { renewingServerClock } from "./support/renewing-clock";

const counts = countsFor("kill-daemon");

/** A run's processes whose command line matches: found by the CHOPIN_RUN in their environment (this run's alone). */
function processesOfRun(run: string, pattern: RegExp): number[] {
	return processesMatching(pattern)
		.filter((p) => {
			try {
				return readFileSync(`/proc/${p.pid}/environ`, "utf8").split("\0").includes(`CHOPIN_RUN=${run}`);
			} catch {
				return false;
			}
		})
		.map((p) => p.pid);
}

describe("the daemon and a backend, killed with SIGKILL", () => {
	let s: RunSetup;
	beforeAll(async () => {
		s = await setUpRuns({ agent: ["wait"] });
	});
	afterAll(async () => {
		await killCliProcesses();
		await s?.close();
	});

	/** A daemon that must come up: its lock taken, its credential welcomed. */
	async function daemonUp(): Promise<CliProcess> {
		const daemon = startDaemon(s.h);
		await eventually("it connected", () => /Connected to /.test(daemon.stderr() + daemon.stdout()));
		await eventually("the machine online", () => s.machines.online(s.machineId));
		return daemon;
	}

	test(
		"the daemon mid-launch (the backend starting): a new daemon takes the lock, reconnects with the same credential, and the run is lost, not half-held",
		counts.guard(async () => {
			const credential = readFileSync(join(s.h.paths.stateDir, "credential.json"), "utf8");
			let daemon = await daemonUp();
			// The point is a window (workspace, then the agent's launch): a bounded number of kills at random
			// short delays after the daemon logs the start.
			for (let i = 0; i < 2; i++) {
				const { id } = await s.start("build", `Launch ${i}.`);
				await eventually("the start logged", () =>
					readLog(s.h.paths.logFile).some((l) => l.run === id && String(l.msg).startsWith("starting the")),
				);
				await Bun.sleep(Math.floor(Math.random() * 300));
				daemon.kill("SIGKILL");
				expect(await daemon.exited).toBe(137);
				counts.fault();
				daemon = await daemonUp();
				// The hello lists nothing of it: lost, with its sentence, never offered again.
				const lost = await s.until(id, "lost", 20_000);
				expect(String(lost.reason)).toContain("no longer holds this run");
				if (HAS_BWRAP) {
					// --die-with-parent: nothing of the run outlives the daemon that launched it.
					await eventually("nothing of the run left", () => processesOfRun(id, /acp-agent\.ts/).length === 0);
				}
			}
			// Never paired again: the credential file is the one it had.
			expect(readFileSync(join(s.h.paths.stateDir, "credential.json"), "utf8")).toBe(credential);
			daemon.kill("SIGINT");
			expect(await daemon.exited).toBe(0);
		}),
		60_000,
	);

	test(
		"a backend mid-turn: the run ends failed with a sentence, the daemon keeps serving, and the next run starts",
		counts.guard(async () => {
			const daemon = await daemonUp();
			const { id } = await s.start("build", "Be killed.");
			await eventually("the agent waiting", async () =>
				(await s.logLines(id)).includes("waiting for .continue"),
			);
			const agents = processesOfRun(id, /acp-agent\.ts wait/);
			expect(agents.length).toBeGreaterThan(0);
			for (const pid of agents) {
				// The list can hold the sandbox (bwrap's command line names the agent too) before the agent inside it:
				// killing the sandbox ends its PID namespace, so the agent may be gone before its own kill.
				try {
					process.kill(pid, "SIGKILL");
				} catch (error) {
					if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
				}
			}
			counts.fault(agents.length);
			const ended = await eventually(
				"the run ended",
				async () => {
					const run = await s.view(id);
					return run.live ? undefined : run;
				},
				20_000,
			);
			expect(ended.status).toBe("failed");
			expect(String(ended.reason ?? "")).not.toBe("");
			expect(s.machines.online(s.machineId)).toBe(true);
			const next = await s.start("build", "After the kill.");
			await eventually("the next agent waiting", async () =>
				(await s.logLines(next.id)).includes("waiting for .continue"),
			);
			expect((await s.act(next.id, "stop")).status).toBeLessThan(300);
			await s.until(next.id, "stopped", 20_000);
			daemon.kill("SIGINT");
			expect(await daemon.exited).toBe(0);
		}),
		60_000,
	);
});

describe("the daemon killed with SIGKILL mid-renewal of its Planner's credential", () => {
	test(
		"the token file is always one whole token, 0600; a new daemon takes the lock, keeps its credential, and renews again",
		counts.guard(async () => {
			// Renewals every 3 s: the server's clock 10 minutes behind the daemon's, less 3 s.
			const { clock, stop: stopClock } = renewingServerClock(3_000);
			const machines = await startMachineServer({ clock, env: { LOCAL_PLANNER_CREDENTIALS: "on" } });
			const h = await makeCliHome();
			let reading = true;
			try {
				await pairHome(machines, h);
				const document = await machines.server.context.domain.documents.create({
					repository: "octo/score",
					title: "Renewals",
					createdBy: "ana",
				});
				const marker = `renewal-backend-${crypto.randomUUID()}`;
				saveMachineConfig(h.paths, {
					...loadMachineConfig(h.paths)!,
					planner: {
						command: ["sh", "-c", `trap 'exit 0' TERM; while :; do sleep 0.2 & wait $!; done # ${marker}`],
						env: {},
						documents: [{ document: document.id, checkout: h.checkout }],
						sandbox: { enabled: false, write: [] },
					},
				});
				const tokenFile = join(h.paths.stateDir, "tokens", document.id, "planner-token");
				const credential = readFileSync(h.paths.credentialFile, "utf8");
				// A reader that looks at every moment: never a torn, empty or world-readable token file.
				const seen = new Set<string>();
				let reads = 0;
				const reader = (async () => {
					while (reading) {
						try {
							const text = readFileSync(tokenFile, "utf8");
							expect(text.trim()).toMatch(/^chopin_p_[A-Za-z0-9_-]{43}$/);
							expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
							seen.add(text.trim());
							reads++;
						} catch (error) {
							if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
						}
						await Bun.sleep(1);
					}
				})();
				const renewals = () =>
					readLog(h.paths.logFile).filter((l) => String(l.msg).startsWith("renewed the")).length;
				let daemon = startDaemon(h);
				for (let i = 0; i < 3; i++) {
					// Once it has renewed, the next renewal is about 3 s away: the kill lands at a random moment around it.
					const before = renewals();
					await eventually("a renewal", () => renewals() > before, 30_000);
					await Bun.sleep(2_000 + Math.floor(Math.random() * 2_000));
					daemon.kill("SIGKILL");
					expect(await daemon.exited).toBe(137);
					counts.fault();
					const tokensBefore = seen.size;
					daemon = startDaemon(h);
					await eventually("it connected", () => /Connected to /.test(daemon.stderr() + daemon.stdout()));
					// The killed daemon's backend goes (with it, or swept by the next one): one backend serves.
					// (Counted by its shell: in a PID namespace, bwrap and the namespace's init carry the same words.)
					await eventually(
						"one backend left",
						() =>
							processesMatching(new RegExp(marker)).filter(
								(p) => p.state !== "Z" && p.cmdline.startsWith("sh -c"),
							).length <= 1,
					);
					// A new credential reaches the file: renewal goes on.
					await eventually("a new token in the file", () => seen.size > tokensBefore, 30_000);
				}
				expect(readFileSync(h.paths.credentialFile, "utf8")).toBe(credential);
				daemon.kill("SIGINT");
				expect(await daemon.exited).toBe(0);
				reading = false;
				await reader;
				counts.add("token file reads during renewals", reads);
				// Nothing but the token file: a write killed before its rename left no temp file behind after the next.
				expect(readdirSync(dirname(tokenFile)).filter((n) => n.startsWith("planner-token."))).toEqual([]);
			} finally {
				reading = false;
				stopClock();
				await killCliProcesses();
				await machines.server.close();
				rmSync(h.root, { recursive: true, force: true });
			}
		}),
		120_000,
	);
});
