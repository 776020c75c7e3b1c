// Network faults between real processes: a real server, the reference agent client (Planner side) and a real
// daemon (`chopin run`, machine side), each through its own TcpProxy. For delay, hold, drop and cut then restore:
// the link is noticed dead within its (shortened) timeout and reattaches. Counted where they arrive: a Stop of a run
// reaches the daemon exactly once; the Planner link resumes (resumable-sessions), so an answer given around the
// fault settles its question exactly once and a Stop is held and arrives after resumed; a Chat turn sent into a
// dying link never arrives twice, and one that does not arrive fails or is refused visibly. Issue 17's drop test
// pauses the Planner link, lets the server drop it as unresponsive, then cuts it: after resumed the held Stop comes
// first, then the kept answer, each once.
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
 * A document whose Planner (the reference client, through its own proxy) holds a session with a live run and an
 * open Decision ("Ship it?"), its turn over: what each fault is injected around.
 */
async function plannerAtWork(title: string) {
	const ctx = server.context;
	const doc = await ctx.domain.documents.create({
		repository: "acme/app",
		title,
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
	expect(
		await ctx.planner.handleMessage({ documentId: doc.id, author: "bob", body: "@chopin plan it" }),
	).toMatchObject({ status: "sent", turn: true });
	const decision = await eventually("the Decision", async () => {
		const [d] = await ctx.domain.decisions.list(doc.id);
		return d;
	});
	await eventually("the turn over", () => ctx.planner.status(doc.id).state === "attached");
	const request = planner.sessions[0]!.waiting[0]!;
	return { doc, proxy, planner, decision, request, asked: () => asked! };
}

/** Once the Planner is idle again, bob's "@chopin after" is sent and its turn reaches the client. */
async function turnAfter(documentId: string, planner: PlannerLink): Promise<void> {
	const ctx = server.context;
	await eventually("the link idle", () => ctx.planner.status(documentId).state === "attached");
	expect(await ctx.planner.handleMessage({ documentId, author: "bob", body: "@chopin after" })).toMatchObject(
		{ status: "sent" },
	);
	await eventually("the turn after", () => planner.turns.some((p) => p.includes("after")));
}

/**
 * What reaches the Planner of what was sent around each fault. The link resumes, so the answer always settles
 * its question, once (a result written into a held link may arrive twice on the wire; the client settles it once
 * and acknowledges both). A Stop is held for the resume and sent first after resumed; one written into a held
 * link as well may arrive twice, which the spec allows (a repeated stop changes nothing). Once the server knows
 * the link is gone (cut), the Stop is held without being sent ({ sent: 0 }) and a turn is refused; a turn needs a
 * new session's started, which a silent link never answers: it fails in Chat, saying the connection closed.
 */
const EXPECTED: Record<Fault, { stops: [number, number]; turnArrives: 0 | 1; knownDown: boolean }> = {
	delay: { stops: [1, 1], turnArrives: 1, knownDown: false },
	hold: { stops: [1, 2], turnArrives: 0, knownDown: false },
	drop: { stops: [1, 2], turnArrives: 0, knownDown: false },
	cut: { stops: [1, 1], turnArrives: 0, knownDown: true },
};

describe("the Planner link (reference client) through a proxy", () => {
	for (const fault of FAULTS) {
		test(
			`${fault}: noticed within the timeout and resumed; the answer settles once, the held Stop arrives, no turn twice`,
			counts.guard(async () => {
				const ctx = server.context;
				const { doc, proxy, planner, decision, request, asked } = await plannerAtWork(`Faults ${fault}`);
				const logged = server.logs.length;

				inject(proxy, fault);
				// A cut is noticed at once (reset); the rest is sent before a silent link is noticed.
				if (fault === "cut") {
					await noticed(logged);
					// Its work is kept: the Planner is disconnected and the Decision stays open.
					await eventually(
						"the Planner disconnected",
						() => ctx.planner.status(doc.id).state === "disconnected",
					);
					expect((await ctx.domain.decisions.get(decision.id)).status).toBe("open");
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
				expect(answered).toBe("answered");
				if (expected.knownDown) {
					// Sent after the server knew: the Stop is held, the turn refused to its sender.
					expect(stop).toEqual({ sent: 0 });
					expect(turn.status).not.toBe("sent");
				} else {
					expect(stop).toEqual({ sent: 1 });
					expect(turn).toMatchObject({ status: "sent", turn: true });
				}
				if (fault !== "delay") {
					await eventually("reattached", () => planner.attaches > 1);
					counts.add("reattachments", planner.attaches - 1);
				}
				expect(await asked()).toMatchObject({ status: "answered", value: true });
				await eventually("the Stop at the Planner", () => planner.stops.length > 0);

				// Once the link is settled, a turn sent now arrives once too.
				await turnAfter(doc.id, planner);

				// Counted where they arrive.
				const results = planner.count("input-result", (m) => m.request === request);
				expect(results).toBeGreaterThanOrEqual(1);
				expect(results).toBeLessThanOrEqual(fault === "hold" ? 2 : 1);
				// After the resume, the held Stop comes first, before the answer sent again.
				if (fault !== "delay") {
					const last = planner.received.map((m) => m.type).lastIndexOf("resumed");
					expect(last).toBeGreaterThan(-1);
					expect(planner.received[last + 1]?.type).toBe("stop");
				}
				const [fewest, most] = expected.stops;
				expect(planner.count("stop")).toBeGreaterThanOrEqual(fewest);
				expect(planner.count("stop")).toBeLessThanOrEqual(most);
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
});

/**
 * Issue 17's drop test: traffic paused (the proxy holds bytes both ways, both sockets open), an answer and a Stop
 * written into the paused link, the server dropping it as unresponsive, then the proxy cutting the connection, so
 * what was held is lost on the wire and the client learns of the drop only from the cut. The client resumes; the
 * server sends the Stop it holds first after resumed, then the answer it kept, each once.
 */
describe("the Planner link paused, then cut", () => {
	test(
		"noticed within the timeout while paused; after the cut the client resumes, the held Stop comes first, the answer once and acknowledged",
		counts.guard(async () => {
			const ctx = server.context;
			const { doc, proxy, planner, decision, request, asked } = await plannerAtWork("Paused then cut");
			const logged = server.logs.length;
			const before = planner.received.length;

			counts.fault();
			proxy.blackhole();
			// Written into the paused link, which the server still counts as live.
			await ctx.domain.decisions.answer(decision.id, { answer: { kind: "confirm", yes: true }, by: "bob" });
			expect(ctx.planner.control(doc.id, "stop", "bob")).toEqual({ sent: 1 });
			expect(await noticed(logged)).toMatchObject({ code: 1001, reason: "unresponsive" });
			// Its work is kept for the client: the run and the unacknowledged answer.
			await eventually("the Planner disconnected", () => ctx.planner.status(doc.id).state === "disconnected");
			// Nothing the server wrote since the pause reached the client, and the client has not noticed anything.
			expect(planner.received.length).toBe(before);
			expect(planner.attaches).toBe(1);

			counts.fault();
			proxy.cut();
			proxy.restore();
			await eventually("resumed", () => planner.count("resumed") > 0);
			counts.add("reattachments", planner.attaches - 1);
			// The first link saw no close frame (the server's 1001 was held, then cut): the cut told the client.
			expect(planner.closes[0]).toMatchObject({ code: 1006 });
			expect(await asked()).toMatchObject({ status: "answered", value: true });
			await eventually("the Stop at the Planner", () => planner.stops.length > 0);

			// Once the link is settled, a turn arrives once, after every earlier frame.
			await turnAfter(doc.id, planner);

			const since = planner.received.slice(before);
			const resumedAt = since.findIndex((m) => m.type === "resumed");
			expect(since[resumedAt]).toMatchObject({
				sessions: [{ session: planner.sessions[0]!.id, requests: [request] }],
			});
			// After resumed: the held Stop first, then the answer sent again.
			expect(since[resumedAt + 1]).toMatchObject({ type: "stop", session: planner.sessions[0]!.id });
			expect(since[resumedAt + 2]).toMatchObject({ type: "input-result", request });
			// Each once, and the answer acknowledged once.
			expect(planner.count("input-result", (m) => m.request === request)).toBe(1);
			expect(planner.sent.filter((m) => m.type === "input-received" && m.request === request)).toHaveLength(
				1,
			);
			expect(planner.count("stop")).toBe(1);
			expect(planner.stops).toHaveLength(1);
			expect(planner.count("resumed")).toBe(1);
			expect(planner.attaches).toBe(2);
			expect(planner.count("attached")).toBe(2);
			// Nothing else twice: no server message but attached (one per link) repeats, whichever socket carried it.
			const seen = planner.received.filter((m) => m.type !== "attached").map((m) => JSON.stringify(m));
			expect(seen.filter((m, i) => seen.indexOf(m) !== i)).toEqual([]);
			expect(planner.turns.filter((p) => p.includes("plan it"))).toHaveLength(1);
			expect(planner.turns.filter((p) => p.includes("after"))).toHaveLength(1);
			expect(planner.ended).toBeUndefined();
			counts.add("messages counted at the Planner", planner.received.length);
		}),
		30_000,
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
