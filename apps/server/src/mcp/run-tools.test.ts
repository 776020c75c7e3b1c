// /mcp with a run's credential, through the official SDK client against a real server: the tools it sees, read_brief,
// each report's effect on the run and its live event, and when the credential stops working (another run's stays its
// own; 15 minutes after the end; at once on discard or revocation).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { briefResultSchema } from "@chopin/agent-link/mcp";
import { connectAgentSocket } from "../testing/agent-socket";
import {
	BASE,
	type BuildsSetup,
	claim,
	expectMessage,
	liveEvents,
	readRun,
	setupBuilds,
	startRun,
	sync,
} from "../testing/builds";
import { issuePlannerToken } from "../testing/machines";
import { connectMcp, type McpTestClient, postMcp } from "../testing/mcp";

let clock: ManualClock;
let s: BuildsSetup | undefined;
const clients: McpTestClient[] = [];
const closers: (() => void)[] = [];
beforeEach(() => {
	clock = new ManualClock();
});
afterEach(async () => {
	for (const c of clients.splice(0)) await c.close();
	for (const close of closers.splice(0)) close();
	await s?.close();
	s = undefined;
});

/** A started and claimed run, its credential, and an MCP client holding it. */
async function claimedRun(setup: BuildsSetup, body: Record<string, unknown> = {}) {
	const { build } = await startRun(setup, body);
	await expectMessage(setup.machine, "run-offer");
	const token = await claim(setup.machine, build.id);
	await sync(setup, setup.machine);
	const mcp = await connectMcp(setup.server.url, token);
	clients.push(mcp);
	return { id: build.id, token, mcp };
}

describe("a run's credential on /mcp", () => {
	test("sees the five run tools and invoke_planner, with their input schemas", async () => {
		s = await setupBuilds(clock);
		const { mcp } = await claimedRun(s);
		const { tools } = await mcp.client.listTools();
		expect(tools.map((t) => t.name)).toEqual([
			"read_brief",
			"report_progress",
			"report_blocker",
			"report_pull_request",
			"report_result",
			"invoke_planner",
		]);
		const progress = tools.find((t) => t.name === "report_progress")!;
		expect(progress.inputSchema).toMatchObject({
			type: "object",
			required: ["stage", "status"],
			additionalProperties: false,
		});
		expect(Object.keys(progress.inputSchema.properties ?? {})).toEqual(["stage", "status", "detail"]);
	});

	test("read_brief: the run, its document and plan, the brief, and what Chopin asks of a build", async () => {
		s = await setupBuilds(clock);
		const { id, mcp } = await claimedRun(s, { brief: "Build step one only." });
		s.machine.send({
			type: "run-status",
			run: id,
			status: "running",
			workspace: { path: "/w", branch: "chopin/step-one" },
		});
		await sync(s, s.machine);
		const brief = briefResultSchema.parse(JSON.parse(await mcp.call("read_brief")));
		expect(brief).toMatchObject({
			run: { id, kind: "build", base: BASE, branch: "chopin/step-one", requestedBy: "ana" },
			document: {
				id: s.documentId,
				title: "Rollout",
				repository: "octo/score",
				url: `${s.target.publicUrl}/d/${s.documentId}`,
			},
			brief: "Build step one only.",
			plan: "# Rollout\n\nShip it in two steps.\n",
		});
		expect(brief.instructions).toContain("@ana asked for it through Chopin");
		expect(brief.instructions).toContain("chopin/step-one");
	});

	test("each report writes to the run and is published live; a result after `finished` decides the ending", async () => {
		s = await setupBuilds(clock);
		const { id, mcp } = await claimedRun(s);
		const events = liveEvents(s);
		await mcp.call("report_progress", { stage: "Tests", status: "running" });
		await mcp.call("report_progress", { stage: "Plan", status: "completed", detail: "Read it." });
		expect(JSON.parse(await mcp.call("report_progress", { stage: "Tests", status: "completed" }))).toEqual({
			recorded: "progress",
			run: id,
			status: "preparing",
		});
		await mcp.call("report_blocker", { message: "Needs a secret only a person has." });
		await mcp.call("report_pull_request", { url: "https://github.com/octo/score/pull/7", title: "Step one" });
		await mcp.call("report_pull_request", {
			url: "https://github.com/octo/score/pull/7",
			title: "Step one (v2)",
		});
		let run = await readRun(s, id);
		expect(run.stages.map((st) => [st.name, st.status, st.detail])).toEqual([
			["Tests", "completed", undefined],
			["Plan", "completed", "Read it."],
		]);
		expect(run.blocker?.message).toBe("Needs a secret only a person has.");
		expect(run.pullRequests).toEqual([
			{ url: "https://github.com/octo/score/pull/7", title: "Step one (v2)", at: clock.now() },
		]);
		expect(events.filter((e) => e.type === "builds.updated")).toHaveLength(6);

		// The machine says finished with only a blocker so far: blocked; the result reported after decides.
		s.machine.send({ type: "run-status", run: id, status: "finished" });
		await sync(s, s.machine);
		expect((await readRun(s, id)).status).toBe("blocked");
		await mcp.call("report_result", {
			outcome: "succeeded",
			summary: "Step one is in.",
			branch: "chopin/x",
			commit: "b".repeat(40),
		});
		run = await readRun(s, id);
		expect(run).toMatchObject({
			status: "succeeded",
			result: {
				outcome: "succeeded",
				summary: "Step one is in.",
				branch: "chopin/x",
				commit: "b".repeat(40),
			},
		});
		expect(events.at(-1)).toMatchObject({ type: "builds.updated", builds: [{ id, status: "succeeded" }] });
	});

	test("bad arguments and tools it does not have are refused as JSON with a code", async () => {
		s = await setupBuilds(clock);
		const { mcp } = await claimedRun(s);
		const bad = await mcp.refused("report_progress", { stage: "Tests", status: "done" });
		expect(bad.code).toBe("invalid-arguments");
		expect(bad.message).toStartWith("Invalid arguments for report_progress: status:");
		expect(
			(await mcp.refused("report_result", { outcome: "succeeded", summary: "x", commit: "HEAD" })).code,
		).toBe("invalid-arguments");
		expect((await mcp.refused("edit_plan", {})).code).toBe("unknown-tool");
		// invoke_planner with another document than its own.
		expect((await mcp.refused("invoke_planner", { message: "hi", document: "zzzzzzzzzzzz" })).code).toBe(
			"document-forbidden",
		);
	});

	test("a failure inside a tool is a refusal with a code too (the document deleted under a run)", async () => {
		s = await setupBuilds(clock);
		const { mcp } = await claimedRun(s);
		await s.server.context.domain.documents.softDelete(s.documentId);
		expect((await mcp.refused("read_brief")).code).toBe("document-not-found");
	});

	test("each credential reports to its own run only", async () => {
		s = await setupBuilds(clock);
		const a = await claimedRun(s, { brief: "A" });
		const b = await claimedRun(s, { brief: "B" });
		await a.mcp.call("report_blocker", { message: "A is blocked." });
		expect((await readRun(s, a.id)).blocker?.message).toBe("A is blocked.");
		expect((await readRun(s, b.id)).blocker).toBeUndefined();
		expect(JSON.parse(await b.mcp.call("read_brief")).brief).toBe("B");
	});

	test("works while the run is live and 15 minutes after it ended, never after", async () => {
		s = await setupBuilds(clock);
		const { id, token } = await claimedRun(s);
		s.machine.send({ type: "run-status", run: id, status: "finished" });
		await sync(s, s.machine);
		await clock.advance(15 * 60_000 - 1);
		const late = await connectMcp(s.server.url, token);
		clients.push(late);
		await late.call("report_result", { outcome: "failed", summary: "Ran out of time." });
		expect((await readRun(s, id)).status).toBe("failed");
		await clock.advance(1);
		const refused = await postMcp(s.server.url, { authorization: `Bearer ${token}` });
		expect(refused.status).toBe(401);
		expect(refused.headers.get("www-authenticate")).toBe('Bearer realm="chopin"');
		expect(await refused.json()).toMatchObject({ code: "unauthorized" });
	});

	test("refused at once once its run is discarded, or its machine revoked", async () => {
		s = await setupBuilds(clock);
		const a = await claimedRun(s, { brief: "A" });
		const b = await claimedRun(s, { brief: "B" });
		expect((await s.post(`/api/builds/${a.id}/discard`)).status).toBe(200);
		expect((await postMcp(s.server.url, { authorization: `Bearer ${a.token}` })).status).toBe(401);
		expect((await postMcp(s.server.url, { authorization: `Bearer ${b.token}` })).status).toBe(200);
		await s.server.context.machines.revoke(s.machineId);
		const revoked = await postMcp(s.server.url, { authorization: `Bearer ${b.token}` });
		expect(revoked.status).toBe(401);
		expect(await revoked.text()).not.toContain(b.token);
	});
});

describe("invoke_planner with a run's credential", () => {
	test("asks its own document's Planner as the machine's owner; as: \"system\" too, since the owner holds it", async () => {
		s = await setupBuilds(clock, { env: { LOCAL_PLANNER_CREDENTIALS: "on" } });
		const { id, mcp } = await claimedRun(s);
		// The document's Planner, attached by ana's machine with its Planner credential.
		const token = await issuePlannerToken(s.target, s.credential, s.documentId);
		const planner = await connectAgentSocket({ url: s.server.url, token });
		closers.push(() => planner.terminate());
		planner.send({ type: "attach", version: 1, document: s.documentId });
		await planner.expect("attached");
		const answer = async (text: string) => {
			const start = await planner.nextOf("start");
			planner.send({ type: "started", session: start.session });
			const turn = await planner.expect("turn");
			planner.send({
				type: "part",
				session: turn.session,
				turn: turn.turn,
				part: { type: "text-delta", id: "t", delta: text },
			});
			planner.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
			return turn;
		};
		const [reply, turn] = await Promise.all([
			mcp.call("invoke_planner", { message: "Which step first?" }),
			answer("Step one."),
		]);
		expect(reply).toBe("Step one.");
		expect(turn.prompt).toBe(`@ana's coding agent (build ${id}): Which step first?`);
		const [followUp] = await Promise.all([
			mcp.call("invoke_planner", { message: "The build ended.", as: "system", document: s.documentId }),
			answer("Thanks."),
		]);
		expect(followUp).toBe("Thanks.");
		const notices = (await s.server.context.domain.chat.list(s.documentId)).messages
			.filter((m) => m.role === "system")
			.map((m) => m.body);
		expect(notices).toEqual([
			`@ana's coding agent (build ${id}) asked @chopin:\n\nWhich step first?`,
			`An automatic follow-up from Chopin (build ${id}) for @chopin:\n\nThe build ended.`,
		]);
	});
});
