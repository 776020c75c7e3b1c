// Network faults between real processes: a real server, the reference agent client (Planner side) and a real
// daemon (`chopin run`, machine side), each through its own TcpProxy. For delay, hold, drop and cut then restore:
// the link is noticed dead within its (shortened) timeout and reattaches. Counted where they arrive: a Stop of a run
// reaches the daemon exactly once; an answer, a Stop and a Chat turn sent to the Planner around the fault arrive at
// most once, and what does not arrive is refused or failed visibly (the server does not resume Planner links yet).
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import {
	type CliProcess,
	eventually,
	killCliProcesses,
	readLog,
} from "../../apps/cli/src/testing/cli-process";
import { type RunSetup, setUpRuns, startDaemon } from "../../apps/cli/src/testing/runs";
import { TcpProxy } from "../../apps/cli/src/testing/tcp-proxy";
import { LOCAL_ACCOUNTS } from "../../apps/server/src/testing/agent-fixture";
import { startTestServer, type TestServer } from "../../apps/server/src/testing/server";
import { signInLocally } from "../../apps/server/src/testing/sign-in";
import { fullCard } from "../../packages/agent-link/src/testing/examples";
import { countsFor } from "./support/counts";
import { attachPlanner, type PlannerLink } from "./support/planner-link";

const counts = countsFor("network-faults");

/** The server notices a silent agent or machine link within TIMEOUT_MS (pings every PING_MS). */
const PING_MS = 200;
const TIMEOUT_MS = 1_500;

type Fault = "delay" | "hold" | "drop" | "cut";
const FAULTS: Fault[] = ["delay", "hold", "drop", "cut"];

function inject(proxy: TcpProxy, fault: Fault): void {
	counts.fault();
	if (fault === "delay") proxy.delay(300);
	else if (fault === "hold") proxy.blackhole();
	else if (fault === "drop") proxy.drop();
	else proxy.cut();
}

function heal(proxy: TcpProxy, fault: Fault): void {
	if (fault === "delay") proxy.delay(0);
	else proxy.restore();
}

const ALICE = LOCAL_ACCOUNTS.users.find((u) => u.login === "alice")!.token;
let server: TestServer;
beforeAll(async () => {
	server = await startTestServer({
		env: {
			AUTH_MODE: "local",
			LOCAL_ACCOUNTS: JSON.stringify(LOCAL_ACCOUNTS),
			DEMO: "off",
			AGENT_CONNECTION_PING_MS: String(PING_MS),
			AGENT_CONNECTION_TIMEOUT_MS: String(TIMEOUT_MS),
			AGENT_CONNECTION_MAX_SILENCE_MS: String(TIMEOUT_MS),
		},
	});
	const target = { fetch: (req: Request) => server.fetch(req), publicUrl: server.context.config.publicUrl };
	await signInLocally(target, "alice");
});
afterAll(async () => {
	await server?.close();
});

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
	for (const thing of open.splice(0).reverse()) await thing.close();
});

/** Lines the server logged for agent links that closed, since index from. */
function linkClosures(from: number): Record<string, unknown>[] {
	return server.logs.slice(from).filter((line) => line.msg === "agent link closed");
}

/**
 * What reaches the Planner of what was sent around each fault. The server does not keep a dropped link's work
 * (resumable-sessions is not built: docs/server.md), so the client reattaches afresh; what was written into a
 * held link arrives once on restore, what a dropped link ate never arrives, and what is sent once the server
 * knows the link is gone is refused to its sender. A turn needs a new session's started, which a silent link
 * never answers: it fails in Chat, saying the connection closed. Never twice.
 */
const EXPECTED: Record<Fault, { arrives: 0 | 1; turnArrives: 0 | 1; refused: boolean }> = {
	delay: { arrives: 1, turnArrives: 1, refused: false },
	hold: { arrives: 1, turnArrives: 0, refused: false },
	drop: { arrives: 0, turnArrives: 0, refused: false },
	cut: { arrives: 0, turnArrives: 0, refused: true },
};

describe("the Planner link (reference client) through a proxy", () => {
	for (const fault of FAULTS) {
		test(
			`${fault}: noticed within the timeout and reattached; the answer, the Stop and the turn arrive at most once`,
			counts.guard(async () => {
				const ctx = server.context;
				const doc = await ctx.domain.documents.create({
					repository: "acme/app",
					title: `Faults ${fault}`,
					source: "# Plan\n",
					createdBy: "alice",
				});
				const proxy = await TcpProxy.start({ host: "127.0.0.1", port: server.port });
				open.push(proxy);
				let asked: Promise<{ status: string; value?: unknown; local?: true }> | undefined;
				const planner: PlannerLink = await attachPlanner({
					url: proxy.url,
					token: ALICE,
					document: doc.id,
					onTurn: (session, prompt) => {
						if (!prompt.includes("plan it")) return;
						// The session holds a live run, so a Stop pauses it rather than withdrawing the question.
						session.reportRuns({ active: ["run-1"], paused: [], cards: [{ ...fullCard, ended: undefined }] });
						asked = session.ask({ method: "confirm", title: "Ship it?", message: "" });
					},
				});
				open.push(planner);

				// A session with a live run and an open Decision.
				expect(
					await ctx.planner.handleMessage({ documentId: doc.id, author: "bob", body: "@chopin plan it" }),
				).toMatchObject({ status: "sent", turn: true });
				const decision = await eventually("the Decision", async () => {
					const [d] = await ctx.domain.decisions.list(doc.id);
					return d;
				});
				await eventually("the turn over", () => ctx.planner.status(doc.id).state === "attached");
				const [session] = planner.sessions;
				const request = session!.waiting[0]!;
				const logged = server.logs.length;

				inject(proxy, fault);
				// A cut is noticed at once (reset); the rest is sent before a silent link is noticed.
				if (fault === "cut") {
					await noticed(logged);
					// The link's teardown withdraws its question after the close is logged: wait for that too.
					await eventually(
						"the question withdrawn",
						async () => (await ctx.domain.decisions.get(decision.id)).status !== "open",
					);
				}
				const answered = await ctx.domain.decisions
					.answer(decision.id, { answer: { kind: "confirm", yes: true }, by: "bob" })
					.then(
						() => "answered",
						(error: { code?: string }) => error.code,
					);
				const stop = ctx.planner.control(doc.id, "stop", "bob");
				const turn = await ctx.planner.handleMessage({
					documentId: doc.id,
					author: "bob",
					body: "@chopin and again",
				});
				if (fault === "hold" || fault === "drop") {
					const closure = await noticed(logged);
					expect(closure).toMatchObject({ code: 1001, reason: "unresponsive" });
				}
				heal(proxy, fault);

				const expected = EXPECTED[fault];
				if (expected.refused) {
					// Sent after the server knew: each refused to its sender with a documented answer.
					expect(answered).toBe("decision-settled");
					expect(stop).toBeNull();
					expect(turn.status).not.toBe("sent");
				} else {
					expect(answered).toBe("answered");
					expect(stop).toEqual({ sent: 1 });
					expect(turn).toMatchObject({ status: "sent", turn: true });
				}
				if (fault !== "delay") {
					await eventually("reattached", () => planner.attaches > 1);
					counts.add("reattachments", planner.attaches - 1);
				}
				const result = await asked!;
				if (expected.arrives) expect(result).toMatchObject({ status: "answered", value: true });
				else expect(result).toMatchObject({ status: "cancelled", local: true });
				if (expected.arrives) await eventually("the Stop at the Planner", () => planner.stops.length > 0);

				// Once the link is settled, a turn sent now arrives once too.
				await eventually("the link idle", () => ctx.planner.status(doc.id).state === "attached");
				expect(
					await ctx.planner.handleMessage({ documentId: doc.id, author: "bob", body: "@chopin after" }),
				).toMatchObject({ status: "sent" });
				await eventually("the turn after", () => planner.turns.some((p) => p.includes("after")));

				// Counted where they arrive.
				expect(planner.count("input-result", (m) => m.request === request)).toBe(expected.arrives);
				expect(planner.count("stop")).toBe(expected.arrives);
				expect(planner.stops).toHaveLength(expected.arrives);
				const again = planner.turns.filter((p) => p.includes("and again"));
				expect(again).toHaveLength(expected.turnArrives);
				if (turn.status === "sent" && !expected.turnArrives) {
					// Not delivered, and not silently: its reply in Chat failed, saying why.
					const chat = (await ctx.domain.chat.list(doc.id)).messages;
					expect(chat.find((m) => m.replyTo === turn.message?.id)).toMatchObject({
						status: "failed",
						error: "The agent connection closed before chopin finished this reply.",
					});
				}
				expect(planner.turns.filter((p) => p.includes("plan it"))).toHaveLength(1);
				expect(planner.turns.filter((p) => p.includes("after"))).toHaveLength(1);
				expect(planner.ended).toBeUndefined();
				counts.add("messages counted at the Planner", planner.received.length);
			}),
			30_000,
		);
	}

	test.todo(
		"resumable-sessions (not built on the server): a dropped link keeps its question, the answer given meanwhile is delivered once after resume, and a held Stop is sent once after resumed",
	);
});

/** The server's log line for the first agent link that closed since index from, once it is there. */
function noticed(from: number): Promise<Record<string, unknown>> {
	return eventually("the server dropping the link", () => linkClosures(from)[0], TIMEOUT_MS * 5);
}

describe("the machine link (a real `chopin run`) through a proxy", () => {
	let s: RunSetup;
	let daemon: CliProcess;
	beforeAll(async () => {
		s = await setUpRuns({
			agent: ["wait"],
			proxy: true,
			env: {
				AGENT_CONNECTION_PING_MS: String(PING_MS),
				AGENT_CONNECTION_TIMEOUT_MS: String(TIMEOUT_MS),
				AGENT_CONNECTION_MAX_SILENCE_MS: String(TIMEOUT_MS),
			},
		});
		daemon = startDaemon(s.h, {
			CHOPIN_CONTROL_SILENCE_MS: String(TIMEOUT_MS),
			CHOPIN_CONTROL_HANDSHAKE_MS: String(TIMEOUT_MS),
		});
		await eventually("the machine online", () => s.machines.online(s.machineId));
	});
	afterAll(async () => {
		daemon?.kill("SIGINT");
		expect(await daemon?.exited).toBe(0);
		await killCliProcesses();
		await s?.close();
	});

	for (const fault of FAULTS) {
		test(
			`${fault}: noticed on both ends within the timeouts, reconnected; a Stop pressed around it reaches the daemon once and stops the run`,
			counts.guard(async () => {
				const log = () => readLog(s.h.paths.logFile);
				const { id } = await s.start("build", `Wait through a ${fault}.`);
				await eventually("the agent waiting", async () =>
					(await s.logLines(id)).includes("waiting for .continue"),
				);
				const received = () => log().filter((l) => l.msg === "run-control received" && l.run === id);
				const downs = log().filter((l) => l.msg === "control channel down").length;
				const attempts = s.proxy!.accepted;

				inject(s.proxy!, fault);
				expect((await s.act(id, "stop")).status).toBeLessThan(300);
				if (fault !== "delay") {
					// The daemon notices (at once for a cut, after CHOPIN_CONTROL_SILENCE_MS otherwise), and the server.
					await eventually(
						"the daemon noticing",
						() => log().filter((l) => l.msg === "control channel down").length > downs,
						TIMEOUT_MS * 5,
					);
					await eventually("the server noticing", () => !s.machines.online(s.machineId), TIMEOUT_MS * 5);
				}
				heal(s.proxy!, fault);
				await s.until(id, "stopped", 15_000);
				await eventually("the machine online again", () => s.machines.online(s.machineId));
				// Settled: the machine answered, so nothing is owed and nothing more will come.
				await eventually(
					"the stop confirmed",
					async () => ((await s.view(id)).control as { state?: string } | null)?.state === "confirmed",
				);
				expect(received()).toHaveLength(1);
				expect(received()[0]).toMatchObject({ action: "stop" });
				counts.add("daemon reconnections", s.proxy!.accepted - attempts);
			}),
			30_000,
		);
	}
});
