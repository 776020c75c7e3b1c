// Spec "Closing": the closes not covered elsewhere (1011 with retry, 1012 on a restart), and what every close
// does: the running turn fails, host tools stop, questions and their Decisions are withdrawn, live runs stop,
// and the link is forgotten; the account keeps the document for the grace period after a detach.
import { afterEach, describe, expect, test } from "bun:test";
import { AgentFixture } from "../testing/agent-fixture";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

describe("closing", () => {
	test("refused unavailable, with retry, then 1011 when Chopin cannot check the account (GitHub failing)", async () => {
		f = await AgentFixture.start({ mode: "github" });
		const doc = await f.createDocument();
		await f.signIn("hubot");
		const socket = await f.connect("hubot");
		f.gh!.inject({ kind: "status", status: 502, pathPrefix: "/api/v3/repos", times: 5 });
		socket.send({ type: "attach", version: 1, document: doc.id });
		expect(await socket.expect("refused")).toEqual({
			type: "refused",
			code: "unavailable",
			message:
				"Chopin could not check the document or the account just now (GitHub may be unavailable). Try again later.",
			retry: true,
		});
		expect(await socket.closed).toEqual({ code: 1011, reason: "unavailable" });
	});

	test("a server restart closes every link with 1012 and releases every ownership", async () => {
		f = await AgentFixture.start();
		const doc = await f.createDocument();
		await f.signIn("alice");
		const { socket } = await f.attach("alice", doc.id);
		await f.server.restart();
		expect(await socket.closed).toEqual({ code: 1012, reason: "server restarting" });
		expect(f.ctx.planner.status(doc.id)).toEqual({ state: "unattached" });
		// Another account attaches at once after the restart.
		await f.signIn("bob");
		expect((await f.attach("bob", doc.id)).attached.document.id).toBe(doc.id);
	});

	test("a detach (1000) ends everything the link held, and the account keeps the document for the grace period", async () => {
		f = await AgentFixture.start();
		const doc = await f.createDocument();
		await f.signIn("alice");
		const { socket } = await f.attach("alice", doc.id);
		const turn = await f.chatTurn(socket, doc.id, "bob");
		socket.sendBatch([
			{
				type: "part",
				session: turn.session,
				turn: turn.turn,
				part: { type: "text-delta", id: "t", delta: "Working" },
			},
			{
				type: "input-request",
				request: "q1",
				session: turn.session,
				input: { method: "confirm", title: "Go?", message: "" },
			},
			{
				type: "runs",
				session: turn.session,
				active: ["r1"],
				paused: [],
				cards: [
					{ id: "r1", name: "Build", status: "running", started: 1, updated: 1, stages: [], waiting: 1 },
				],
			},
		]);
		await f.until(async () => (await f!.ctx.domain.decisions.list(doc.id)).length === 1, "the Decision");
		await f.until(async () => (await f!.ctx.domain.runs.list(doc.id)).length === 1, "the run card");
		socket.send({ type: "detach" });
		expect(await socket.closed).toEqual({ code: 1000, reason: "detach" });
		await f.until(() => f!.ctx.planner.connections() === 0, "the link to be forgotten");
		await f.ctx.planner.settled();
		await f.until(async () => (await f!.chat(doc.id)).at(-1)?.status === "failed", "the reply to fail");
		expect((await f.chat(doc.id)).at(-1)).toMatchObject({
			role: "planner",
			body: "Working",
			status: "failed",
			error: "The agent connection closed before chopin finished this reply.",
		});
		expect((await f.ctx.domain.decisions.list(doc.id, { all: true }))[0]).toMatchObject({
			status: "cancelled",
			settledReason: "withdrawn",
		});
		expect((await f.ctx.domain.runs.list(doc.id))[0]).toMatchObject({ displayStatus: "stopped" });
		expect(f.ctx.planner.status(doc.id)).toMatchObject({ state: "grace", login: "alice" });
		expect(f.ctx.planner.linkStats()).toEqual([]);
	});
});
