// The supervisor against a real server (local mode with Planner credentials), real git and a real backend process,
// on a ManualClock shared with the server: renewal, restarts on the backoff, refusals and stopping.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { Backoff } from "@chopin/agent-link/backoff";
import { ManualClock } from "@chopin/agent-link/clock";
import { isAlive as isLive } from "../local/process-liveness";
import { type Containment, currentContainment } from "../processes/containment";
import type { CliError } from "../program/errors";
import { ServerApi } from "../server-link/server-api";
import { readLog } from "../testing/cli-process";
import { createTestContext, makeTempDir, type TestContext } from "../testing/context";
import { git } from "../testing/git";
import { type MachineServer, makeCliHome, pairHome, startMachineServer } from "../testing/machine-server";
import { liveTagged, newTag, TAG_VARIABLE } from "../testing/processes";
import { CheckoutGate } from "../workspaces/gate";
import { type PlannerEvent, PlannerSupervisor, type SupervisorDeps } from "./supervisor";

const BACKEND = join(import.meta.dir, "..", "testing", "fixtures", "planner-backend.sh");
const ECHO = join(import.meta.dir, "..", "..", "..", "..", "examples", "planner-echo", "src", "main.ts");

let machines: MachineServer | undefined;
let ctx: TestContext | undefined;
const supervisors: PlannerSupervisor[] = [];
const homes: string[] = [];

afterEach(async () => {
	for (const s of supervisors.splice(0)) await s.stop("test over");
	await machines?.server.close();
	machines = undefined;
	ctx?.cleanup();
	ctx = undefined;
	for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

/** Waits on real time, with a bound, for what a real process or a real request does. */
async function until(check: () => boolean, what: string): Promise<void> {
	for (let i = 0; i < 1000; i++) {
		if (check()) return;
		await Bun.sleep(10);
	}
	throw new Error(`timed out waiting for ${what}`);
}

async function setup(
	options: {
		env?: Record<string, string>;
		sandbox?: "bwrap" | "none";
		command?: string[];
		containment?: Containment;
	} = {},
) {
	const clock = new ManualClock(Date.now());
	machines = await startMachineServer({ clock, env: { LOCAL_PLANNER_CREDENTIALS: "on" } });
	const home = await makeCliHome();
	homes.push(home.root);
	const { credential, machineId } = await pairHome(machines, home);
	ctx = createTestContext({ env: home.env });
	const document = await machines.server.context.domain.documents.create({
		repository: "octo/score",
		title: "Plan",
		createdBy: "ana",
	});
	const api = new ServerApi({ ...ctx, clock }, machines.server.url);
	const events: { document: string; event: PlannerEvent; reason?: string }[] = [];
	// Every process of the backend carries it (an --env value), however it left its group.
	const tag = newTag();
	const refusals: CliError[] = [];
	const deps: SupervisorDeps = {
		clock,
		log: ctx.log,
		secrets: ctx.secrets,
		platform: "linux",
		server: machines.server.url,
		baseDir: home.paths.stateDir,
		command: options.command ?? [BACKEND],
		env: { BACKEND_SECRET: "sekrit-value-42", [TAG_VARIABLE]: tag, ...options.env },
		baseEnv: { PATH: process.env.PATH, HOME: home.env.HOME },
		sandbox: { kind: options.sandbox ?? "none", writable: [], hidden: [home.paths.credentialFile] },
		git: { spawn: ctx.spawn, env: home.env },
		gate: new CheckoutGate(),
		cloneUrl: () => {
			throw new Error("no clone expected");
		},
		plannerCredential: (doc) => api.plannerCredential(credential, doc),
		githubToken: () => api.githubToken(credential),
		onEvent: (doc, event, reason) => events.push({ document: doc, event, ...(reason ? { reason } : {}) }),
		onChange: () => {},
		onMachineRefused: (error) => refusals.push(error),
		// Deterministic: always the longest delay of each step.
		backoff: Backoff.exponential({ initial: 1_000, max: 300_000 }),
		graceMs: 5_000,
		...(options.containment ? { containment: options.containment } : {}),
	};
	const supervise = (ref = document.id) => {
		const s = new PlannerSupervisor(
			{ ref, checkout: home.checkout, repository: "octo/score", source: "config" },
			deps,
		);
		supervisors.push(s);
		void s.start();
		return s;
	};
	return { clock, home, document, deps, events, refusals, supervise, machineId, credential, tag };
}

const backendLines = () =>
	readLog(ctx!.paths.logFile)
		.filter((l) => l.stream === "stdout" || l.stream === "stderr")
		.map((l) => String(l.msg));
const logText = () =>
	readLog(ctx!.paths.logFile)
		.map((line) => JSON.stringify(line))
		.join("\n");

describe("PlannerSupervisor", () => {
	test("the example backend reattaches with the renewed credential after its link drops", async () => {
		const { clock, supervise, document } = await setup({ command: [process.execPath, ECHO] });
		const s = supervise();
		const attached = () => backendLines().filter((l) => l.includes("attached to")).length;
		await until(() => s.state === "running" && attached() === 1, "the first attach");
		const tokenFile = s.tokenFiles!.planner;
		const first = readFileSync(tokenFile, "utf8");
		// Renewed at 10 minutes; at 16 the launch's credential has expired and only the file's is good.
		await clock.advance(10 * 60_000);
		await until(() => readFileSync(tokenFile, "utf8") !== first, "the renewed token file");
		await clock.advance(6 * 60_000);
		// Advancing the server's clock also outran its pings, so the link may have dropped and come
		// back meanwhile; wait until it is attached, then drop it for sure with a restart.
		await until(() => backendLines().at(-1)?.includes("attached to") === true, "the backend attached");
		const before = attached();
		const launched = machines!.server.context.machines;
		expect(await launched.verifyPlannerCredential(first)).toBeNull();
		const pid = s.snapshot()!.pid;
		await machines!.server.restart();
		await until(() => attached() > before, "the attach after the restart");
		expect(s.snapshot()).toMatchObject({ pid, restarts: 0, state: "running", document: document.id });
	});

	test("launches with a fresh credential in a 0600 file, masks its output, renews before expiry, stops cleanly", async () => {
		const { clock, home, document, events, supervise, tag } = await setup();
		const s = supervise();
		await until(() => s.state === "running", "the backend to run");
		const snap = s.snapshot()!;
		expect(snap).toMatchObject({
			document: document.id,
			state: "running",
			checkout: home.checkout,
			worktree: join(home.paths.stateDir, "planners", "octo", "score", document.id),
			restarts: 0,
			sandbox: "none",
		});
		const tokenFile = s.tokenFiles!.planner;
		const first = readFileSync(tokenFile, "utf8");
		expect(first).toMatch(/^chopin_p_[A-Za-z0-9_-]{43}$/);
		expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
		await until(
			() => logText().includes("got TERM") || logText().includes("on stderr"),
			"the backend's output",
		);
		const log = logText();
		// The pid the backend sees is its own namespace's in the pid-namespace containment; status has the leader's.
		expect(log).toMatch(new RegExp(`started pid=\\d+ document=${document.id} `));
		expect(log).toContain("secrets: token [redacted] from-file [redacted] env [redacted]");
		expect(log).not.toContain(first);
		expect(log).not.toContain("sekrit-value-42");
		// Local mode gives no GitHub token: its three variables are absent.
		expect(log).toContain("github: file=none expires=none token=none");

		// 15-minute credentials are renewed 5 minutes before they expire: the file changes, the backend runs on.
		await clock.advance(10 * 60_000);
		await until(() => readFileSync(tokenFile, "utf8") !== first, "the renewed token file");
		expect(readFileSync(tokenFile, "utf8")).toMatch(/^chopin_p_/);
		expect(s.snapshot()?.pid).toBe(snap.pid);

		await s.stop("test over");
		expect(s.state).toBe("stopped");
		expect(existsSync(tokenFile)).toBe(false);
		expect(alive(snap.pid!)).toBe(false);
		expect(liveTagged(tag)).toEqual([]);
		expect(events.map((e) => e.event)).toEqual(["starting", "started", "stopped"]);
	});

	test("a backend that exits is started again on the backoff with a fresh credential", async () => {
		const { clock, supervise } = await setup();
		const s = supervise();
		await until(() => s.state === "running", "the first launch");
		const firstPid = s.snapshot()!.pid!;
		const firstToken = readFileSync(s.tokenFiles!.planner, "utf8");
		process.kill(firstPid, "SIGKILL");
		// Counted once what it left is stopped, as the backoff's timer starts: the clock may move from here.
		await until(() => s.state === "backoff" && s.snapshot()?.restarts === 1, "the backoff after the exit");
		expect(existsSync(s.tokenFiles!.planner)).toBe(false);
		expect(s.snapshot()).toMatchObject({ restarts: 1 });
		await clock.advance(1_000);
		await until(() => s.state === "running", "the restart");
		expect(s.snapshot()!.pid).not.toBe(firstPid);
		expect(readFileSync(s.tokenFiles!.planner, "utf8")).not.toBe(firstToken);
		// The second exit waits twice as long.
		process.kill(s.snapshot()!.pid!, "SIGKILL");
		await until(() => s.state === "backoff" && s.snapshot()?.restarts === 2, "the second backoff");
		await clock.advance(1_000);
		expect(s.state).toBe("backoff");
		await clock.advance(1_000);
		await until(() => s.state === "running", "the second restart");
		expect(s.snapshot()).toMatchObject({ restarts: 2 });
	});

	// The machine's own containment (a PID namespace where bwrap works) and the process group, which is all macOS has.
	for (const containment of [currentContainment("linux"), { mode: "group" as const, reason: "test" }]) {
		const mode = containment.mode;
		test(`stop: grandchildren that ignore SIGTERM are gone after the 5 s grace period (${mode})`, async () => {
			const pidDir = makeTempDir();
			homes.push(pidDir);
			const pidFile = join(pidDir, "grandchild.pid");
			const { clock, supervise, tag } = await setup({ env: { BACKEND_GRANDCHILD: pidFile }, containment });
			const s = supervise();
			await until(
				() => s.state === "running" && existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "",
				"the grandchild",
			);
			const grandchild = () => liveTagged(tag).filter((p) => p.command.includes("while :"));
			const leader = s.snapshot()!.pid!;
			const stopped = s.stop("test over");
			await until(() => !alive(leader), "the backend to end on SIGTERM");
			if (containment.mode === "pid-namespace") {
				// Its namespace ended with it: the grandchild went at once.
				await until(() => grandchild().length === 0, "the namespace to end");
			} else {
				expect(grandchild().length).toBeGreaterThan(0);
				await clock.advance(5_000);
			}
			await stopped;
			expect(liveTagged(tag)).toEqual([]);
		});

		test(`a backend that exits leaving a setsid child on its pipes is restarted; nothing of it is left (${mode})`, async () => {
			const { clock, supervise, tag, events } = await setup({
				env: { BACKEND_ESCAPE: "1", BACKEND_EXIT: "0" },
			});
			const s = supervise();
			await until(() => s.state === "backoff", "the first exit");
			// Its pid is gone from the state at once, while what it left is being stopped.
			expect(s.snapshot()?.pid).toBeUndefined();
			expect(s.snapshot()?.reason).toBe("the backend stopped: it exited with code 0");
			// Outside a PID namespace the child ignoring SIGTERM holds on until the grace period is over.
			if (containment.mode !== "pid-namespace") await clock.advance(5_000);
			await until(() => events.some((e) => e.event === "exited"), "the exit's event");
			// Stopped before the backoff: neither the setsid child holding its pipes nor the one ignoring SIGTERM is left.
			expect(liveTagged(tag)).toEqual([]);
			expect(existsSync(s.tokenFiles!.planner)).toBe(false);
			await clock.advance(1_000);
			await until(() => events.filter((e) => e.event === "started").length === 2, "the restart");
			expect(events.map((e) => e.event).slice(0, 5)).toEqual([
				"starting",
				"started",
				"exited",
				"starting",
				"started",
			]);
		});
	}

	test("a repository no checkout serves runs in a clone made under the base dir, fetched before each launch", async () => {
		const { clock, home, deps, document } = await setup();
		const upstream = home.checkout;
		const s = new PlannerSupervisor(
			{ ref: document.id, repository: "octo/score", source: "assigned" },
			{ ...deps, cloneUrl: (repository) => (repository === "octo/score" ? upstream : "nowhere") },
		);
		supervisors.push(s);
		void s.start();
		await until(() => s.state === "running", "the backend in the clone");
		const clone = join(home.paths.stateDir, "repos", "octo", "score");
		expect(s.snapshot()).toMatchObject({ checkout: clone });
		expect(readFileSync(join(clone, "README.md"), "utf8")).toBe("test\n");
		await git(upstream, "commit", "--quiet", "--allow-empty", "-m", "later");
		process.kill(s.snapshot()!.pid!, "SIGKILL");
		await until(() => s.state === "backoff" && s.snapshot()?.restarts === 1, "the backoff");
		await clock.advance(1_000);
		await until(() => s.state === "running", "the second launch");
		// The second launch fetched the clone first.
		expect(await git(clone, "log", "--format=%s", "-1", "origin/main")).toBe("later");
	});

	test("a document Chopin refuses ends the supervisor and says why", async () => {
		const { events, supervise } = await setup();
		const s = supervise("aaaaaaaaaaaa");
		await until(() => s.state === "failed", "the refusal");
		expect(s.reason).toContain("not-found");
		expect(events.map((e) => e.event)).toEqual(["starting", "refused"]);
		expect(existsSync(join(ctx!.paths.stateDir, "tokens", "aaaaaaaaaaaa"))).toBe(false);
	});

	test("a revoked machine: the renewal is refused for good, the machine is told, the backend stops and its file goes", async () => {
		const { clock, machineId, refusals, supervise } = await setup();
		const s = supervise();
		await until(() => s.state === "running", "the backend to run");
		const tokenFile = s.tokenFiles!.planner;
		expect((await machines!.revoke(machineId)).status).toBe(204);
		await clock.advance(10 * 60_000);
		await until(() => refusals.length > 0, "the refusal");
		expect(refusals[0]!.code).toBe("machine-revoked");
		// The manager stops every backend when told; here the test plays the manager.
		await s.stop("the machine was revoked", "refused");
		expect(existsSync(tokenFile)).toBe(false);
		expect(s.state).toBe("failed");
		expect(s.reason).toBe("the machine was revoked");
	});
});

/** Zombies (exited, never reaped in these containers) count as gone. */
function alive(pid: number): boolean {
	return isLive({ pid });
}
