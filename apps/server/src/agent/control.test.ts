// Spec "stop" and "resume" (Stop Planner and Resume Planner from the document page): a writer's press sends one
// request per session, control-result within 10 seconds, and Chat notices saying whether the client confirmed.
import { afterEach, describe, expect, test } from "bun:test";
import { AgentFixture } from "../testing/agent-fixture";
import type { CookieJar } from "../testing/sign-in";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

async function withRuns() {
	f = await AgentFixture.start();
	const doc = await f.createDocument();
	await f.signIn("alice");
	const bob = await f.signIn("bob");
	const { socket } = await f.attach("alice", doc.id);
	const turn = await f.chatTurn(socket, doc.id, "bob");
	socket.send({
		type: "runs",
		session: turn.session,
		active: ["r1"],
		paused: [],
		cards: [{ id: "r1", name: "Build", status: "running", started: 1, updated: 1, stages: [], waiting: 0 }],
	});
	socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
	await f.sync(socket);
	await f.ctx.planner.settled();
	const press = (action: "stop" | "resume", jar: CookieJar = bob) =>
		f!.request("POST", `/api/documents/${doc.id}/planner/${action}`, undefined, jar);
	const notices = async () => (await f!.chat(doc.id)).filter((m) => m.role === "system").map((m) => m.body);
	return { f, socket, turn, press, notices, documentId: doc.id };
}

describe("Stop and Resume Planner", () => {
	test("stop goes to each session with a fresh request id; a confirmation says chopin stopped", async () => {
		const { f, socket, turn, press, notices } = await withRuns();
		const res = await press("stop");
		expect(res.status).toBe(202);
		expect(await res.json()).toEqual({ sent: 1 });
		const stop = await socket.expect("stop");
		expect(stop).toEqual({ type: "stop", request: stop.request, session: turn.session });
		socket.send({ type: "control-result", request: stop.request, ok: true });
		await f.until(async () => (await notices()).length === 1, "the notice");
		expect(await notices()).toEqual(["chopin stopped, as @bob asked."]);

		await press("resume");
		const resume = await socket.expect("resume");
		expect(resume.request).not.toBe(stop.request);
		socket.send({ type: "control-result", request: resume.request, ok: true });
		await f.until(async () => (await notices()).length === 2, "the notice");
		expect((await notices())[1]).toBe("chopin resumed its workflows, as @bob asked.");
	});

	test("no answer within 10 seconds: Chat says it is not confirmed; a late answer still counts", async () => {
		const { f, socket, press, notices } = await withRuns();
		await press("stop");
		const stop = await socket.expect("stop");
		await f.clock.advance(10_000);
		await f.until(async () => (await notices()).length === 1, "the notice");
		expect(await notices()).toEqual(["chopin has not confirmed that it stopped, as @bob asked."]);
		socket.send({ type: "control-result", request: stop.request, ok: true });
		await f.until(async () => (await notices()).length === 2, "the late confirmation");
		expect((await notices())[1]).toBe("chopin confirmed that it stopped.");
	});

	test("a refusal is said, with the client's message", async () => {
		const { f, socket, press, notices } = await withRuns();
		await press("resume");
		const resume = await socket.expect("resume");
		socket.send({ type: "control-result", request: resume.request, ok: false, message: "The run has ended" });
		await f.until(async () => (await notices()).length === 1, "the notice");
		expect(await notices()).toEqual([
			"chopin could not resume its workflows, as @bob asked: The run has ended",
		]);
	});

	test("only repository writers may press them, and only with a Planner attached", async () => {
		const { f, press, socket, documentId } = await withRuns();
		const carol = await f.signIn("carol");
		expect((await press("stop", carol)).status).toBe(403);
		expect((await f.request("POST", `/api/documents/${documentId}/planner/stop`)).status).toBe(401);
		socket.send({ type: "detach" });
		await socket.closed;
		await f.until(() => f.ctx.planner.connections() === 0);
		const res = await press("stop");
		expect(res.status).toBe(409);
		expect((await res.json()).code).toBe("planner-not-attached");
	});

	test("Stop on a Planner that only waits on a question withdraws it", async () => {
		f = await AgentFixture.start();
		const doc = await f.createDocument();
		await f.signIn("alice");
		const bob = await f.signIn("bob");
		const { socket } = await f.attach("alice", doc.id);
		const turn = await f.chatTurn(socket, doc.id, "bob");
		socket.send({
			type: "input-request",
			request: "q1",
			session: turn.session,
			input: { method: "confirm", title: "Go?", message: "" },
		});
		socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
		await f.until(async () => (await f!.ctx.domain.decisions.list(doc.id)).length === 1, "the Decision");
		await f.request("POST", `/api/documents/${doc.id}/planner/stop`, undefined, bob);
		const messages = [await socket.next(), await socket.next()];
		expect(messages).toContainEqual({
			type: "input-result",
			request: "q1",
			status: "cancelled",
			value: false,
		});
		expect(messages.find((m) => m.type === "stop")).toBeDefined();
	});
});
