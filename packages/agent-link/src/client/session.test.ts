/** A session's questions and reports around its start, its end, and a link that drops. */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { questions } from "../testing/examples";
import { connectAgent } from "./connection";
import { DOCUMENT, TOKEN } from "./contract/harness";
import { ScriptedServer } from "./contract/scripted-server";
import type { Session } from "./session";
import { attachedLink, recorder, sync } from "./testing";

let server: ScriptedServer;
beforeEach(() => {
	server = new ScriptedServer(TOKEN);
});
afterEach(() => server.stop());

async function started() {
	const record = recorder();
	const setup = await attachedLink(server, record);
	setup.connection.send({ type: "start", session: "s1", mode: "planner" });
	await setup.connection.expect("started");
	return { ...setup, record, session: record.sessions[0] as Session };
}

test("what a backend sends while its start handler runs follows started", async () => {
	const record = recorder();
	record.behave.start = async (session) => {
		session.ask(questions.confirm);
		session.reportRuns({ active: [], paused: [], cards: [] });
		await Promise.resolve();
	};
	const { connection } = await attachedLink(server, record);
	connection.send({ type: "start", session: "s1", mode: "planner" });
	expect((await connection.next()).type).toBe("started");
	expect((await connection.next()).type).toBe("input-request");
	expect((await connection.next()).type).toBe("runs");
});

test("a question withdrawn before it was sent settles cancelled and the server never hears of it", async () => {
	const { session, connection } = await started();
	const controller = new AbortController();
	controller.abort();
	const asked = session.ask(questions.confirm, { signal: controller.signal });
	expect(await asked).toEqual({
		type: "input-result",
		request: asked.request,
		status: "cancelled",
		message: "The question was withdrawn.",
		local: true,
	});
	await sync(connection);
	expect(
		connection.frames.some((frame) => "message" in frame && frame.message.type.startsWith("input")),
	).toBe(false);
});

test("aborting an asked question's signal withdraws it with input-cancel", async () => {
	const { session, connection } = await started();
	const controller = new AbortController();
	const asked = session.ask(questions.select, { signal: controller.signal, workflowRunId: "run-1" });
	expect(await connection.expect("input-request")).toMatchObject({
		request: asked.request,
		workflowRunId: "run-1",
	});
	controller.abort();
	expect(await connection.expect("input-cancel")).toEqual({ type: "input-cancel", request: asked.request });
	expect((await asked).status).toBe("cancelled");
	expect(session.cancel(asked.request)).toBe(false);
});

test("an ended session takes no more questions or reports", async () => {
	const { session, connection, record } = await started();
	connection.send({ type: "destroy", session: "s1" });
	await sync(connection);
	expect(session.ended).toBe(true);
	expect(session.signal.aborted).toBe(true);
	expect(record.destroyed).toEqual(["s1"]);
	expect(() => session.ask(questions.confirm)).toThrow(expect.objectContaining({ code: "session-ended" }));
	expect(() => session.reportRuns({ active: [], paused: [], cards: [] })).toThrow(
		expect.objectContaining({ code: "session-ended" }),
	);
});

test("between a drop and its resume, reportRuns sends nothing and says so", async () => {
	const { session, connection, link } = await started();
	connection.terminate();
	await link.closed;
	expect(session.reportRuns({ active: [], paused: [], cards: [] })).toBe(0);
});

test("with run-stage-deltas a report again sends only what changed; after a resume every stage goes again", async () => {
	const { session, connection, link, record } = await started();
	const stage = (id: string, status: "running" | "completed") => ({ id, name: `Stage ${id}`, status });
	const report = (...stages: ReturnType<typeof stage>[]) => ({
		active: ["r1"],
		paused: [],
		cards: [
			{ id: "r1", name: "Run", status: "running" as const, started: 1, updated: 2, waiting: 0, stages },
		],
	});
	session.reportRuns(report(stage("a", "completed"), stage("b", "running")));
	expect((await connection.expect("runs")).cards[0]).not.toHaveProperty("stagesDelta");
	session.reportRuns(report(stage("a", "completed"), stage("b", "completed"), stage("c", "running")));
	expect((await connection.expect("runs")).cards[0]).toMatchObject({
		stagesDelta: true,
		stages: [stage("b", "completed"), stage("c", "running")],
	});

	connection.terminate();
	const { resume } = await link.closed;
	const resumed = connectAgent({
		url: server.url,
		token: TOKEN,
		document: DOCUMENT,
		handlers: record.handlers,
		resume,
	});
	const again = await server.nextConnection();
	await again.attach();
	await again.expect("resume");
	again.send({ type: "resumed", sessions: [{ session: "s1", requests: [] }] });
	await resumed;
	session.reportRuns(report(stage("a", "completed"), stage("b", "completed"), stage("c", "running")));
	const full = (await again.expect("runs")).cards[0]!;
	expect([full.stagesDelta, full.stages.map((s) => s.id)]).toEqual([undefined, ["a", "b", "c"]]);
});
