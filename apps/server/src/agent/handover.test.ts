// Spec "After a server restart", in github mode on SQLite and PostgreSQL: a graceful stop tells every link, closes
// it 1012 and withdraws nothing; a resumable link's hold is written to planner_link_holds and rebuilt by the next
// start with its hand-over window (the Planner shown attached, @chopin refused as still connecting); the client
// resumes and receives an answer given in between exactly once; a window missed leaves the hold disconnected;
// an attach that does not resume ends it. Under AUTH_MODE=local nothing is handed over.
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Question } from "@chopin/agent-link";
import { runnableKinds } from "../store/testing";
import { AgentFixture } from "../testing/agent-fixture";
import { wording } from "./wording";

setDefaultTimeout(30_000);

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

const RESUMABLE = { features: "resumable-sessions, restart-notice" };
const question: Question = { method: "confirm", title: "Ship it?", message: "" };

/** octocat's Planner (resumable unless told), in a turn that asked q1 and reported a live run. */
async function asking(
	store: "sqlite" | "postgres",
	mode: "github" | "local" = "github",
	options: { features?: string } = RESUMABLE,
) {
	f = await AgentFixture.start({ mode, store });
	const fx = f;
	const login = fx.cast.admin;
	const doc = await fx.createDocument();
	const jar = await fx.signIn(login);
	const { socket } = await fx.attach(login, doc.id, options);
	const turn = await fx.chatTurn(socket, doc.id, login);
	const session = turn.session;
	await fx.askAndRun(socket, doc.id, turn, question);
	const decisionId = (await fx.ctx.domain.decisions.findByRequest(doc.id, "q1"))!.id;
	const answer = () =>
		fx.ctx.domain.decisions.answer(decisionId, { answer: { kind: "confirm", yes: true }, by: login });
	const status = async () => (await fx.ctx.domain.decisions.get(decisionId)).status;
	/** The owner's browser comes back to the new process: its cookie makes the sign-in live again. */
	const browserBack = async () =>
		expect((await fx.request("GET", "/api/me", undefined, jar)).status).toBe(200);
	/** Signed in on this process, the same client attaches and resumes: it gets its session and q1 back. */
	const resumeSignedIn = async () => {
		await fx.signIn(login);
		const { socket: back } = await fx.attach(login, doc.id, RESUMABLE);
		back.send({ type: "resume", sessions: [{ session, requests: ["q1"] }] });
		expect(await back.expect("resumed")).toEqual({
			type: "resumed",
			sessions: [{ session, requests: ["q1"] }],
		});
		return back;
	};
	return { f: fx, login, doc, socket, session, decisionId, answer, status, browserBack, resumeSignedIn };
}

for (const store of runnableKinds()) {
	describe(`a graceful restart hands the Planner over [${store}]`, () => {
		test("told, closed 1012, nothing withdrawn; rebuilt in its window; an answer in between arrives once", async () => {
			const { f, login, doc, socket, answer, status, resumeSignedIn } = await asking(store);
			await f.server.restart();
			expect(await socket.expect("restarting")).toEqual({
				type: "restarting",
				reconnectWithinMs: f.ctx.config.handoverPlannerWindowMs,
			});
			expect((await socket.closed).code).toBe(1012);
			// The next process: the Decision is still open, and the Planner shows attached in its window.
			expect(await status()).toBe("open");
			expect(f.ctx.planner.status(doc.id)).toEqual({ state: "attached", login, restarting: true });
			const sent = await f.ctx.planner.handleMessage({
				documentId: doc.id,
				author: login,
				body: "@chopin hi",
			});
			expect(sent).toMatchObject({ status: "refused", message: wording.stillConnectingHandover(login) });
			// invoke_planner is refused the same way.
			const invoked = await f.ctx.planner.invoke({
				documentId: doc.id,
				by: login,
				asker: "a coding agent",
				system: false,
				message: "Summarise the plan.",
			});
			expect(invoked).toEqual({
				status: "refused",
				code: "planner-not-attached",
				message: wording.stillConnectingHandover(login),
			});
			// A member answers before the client is back.
			await answer();
			const back = await resumeSignedIn();
			expect(await back.expect("input-result")).toMatchObject({
				request: "q1",
				status: "answered",
				value: true,
			});
			back.send({ type: "input-received", request: "q1" });
			// The live run keeps the session; nothing more is sent for the question.
			await f.sync(back);
			expect(back.pending.filter((m) => m.type === "input-result")).toEqual([]);
			expect(f.ctx.planner.status(doc.id).state).toBe("attached");
			await f.ctx.planner.settled();
			const rows = await f.ctx.store.many(f.ctx.store.sql`SELECT * FROM planner_link_holds`);
			expect(rows).toEqual([]);
		});

		test("a resume before the owner's sign-in is back waits inside the window, then goes on once the cookie restores it", async () => {
			const { f, login, doc, session, answer, browserBack } = await asking(store);
			await f.server.restart();
			await answer();
			// No sign-in on the new process yet: the attach succeeds and the resume waits, nothing refused.
			const { socket: back } = await f.attach(login, doc.id, RESUMABLE);
			back.send({ type: "resume", sessions: [{ session, requests: ["q1"] }] });
			await f.ctx.planner.settled();
			expect(back.pending).toEqual([]);
			expect(f.ctx.planner.status(doc.id)).toEqual({ state: "attached", login });
			await browserBack();
			expect(await back.expect("resumed")).toEqual({
				type: "resumed",
				sessions: [{ session, requests: ["q1"] }],
			});
			expect(await back.expect("input-result")).toMatchObject({ request: "q1", status: "answered" });
			back.send({ type: "input-received", request: "q1" });
			await f.sync(back);
			// The ownership rests on the restored sign-in: signing out of it ends the Planner.
			await f.signOut(login);
			expect(await back.nextOf("refused")).toMatchObject({ code: "sign-in-required" });
		});

		test("the window ends with the sign-in not back: refused unavailable with retry, and the hold stays", async () => {
			const { f, login, doc, session, browserBack, status } = await asking(store);
			await f.server.restart();
			const { socket: back } = await f.attach(login, doc.id, RESUMABLE);
			back.send({ type: "resume", sessions: [{ session, requests: ["q1"] }] });
			await f.ctx.planner.settled();
			await f.clock.advance(f.ctx.config.handoverPlannerWindowMs);
			expect(await back.expect("refused")).toMatchObject({ code: "unavailable", retry: true });
			expect(f.ctx.planner.status(doc.id)).toEqual({ state: "disconnected", login });
			expect(await status()).toBe("open");
			// Sent again once the sign-in is back, the same resume gets its session.
			await browserBack();
			const { socket: again } = await f.attach(login, doc.id, RESUMABLE);
			again.send({ type: "resume", sessions: [{ session, requests: ["q1"] }] });
			expect(await again.expect("resumed")).toEqual({
				type: "resumed",
				sessions: [{ session, requests: ["q1"] }],
			});
		});

		test("an answer given after the resume goes straight to the client, once", async () => {
			const { f, answer, resumeSignedIn } = await asking(store);
			await f.server.restart();
			const back = await resumeSignedIn();
			await answer();
			expect(await back.expect("input-result")).toMatchObject({ request: "q1", status: "answered" });
			back.send({ type: "input-received", request: "q1" });
			await f.sync(back);
			expect(back.pending.filter((m) => m.type === "input-result")).toEqual([]);
		});

		test("the window ends with no resume: the hold is disconnected, logged as missed, and still resumable", async () => {
			const { f, login, doc, resumeSignedIn } = await asking(store);
			await f.server.restart();
			await f.clock.advance(f.ctx.config.handoverPlannerWindowMs);
			expect(f.ctx.planner.status(doc.id)).toEqual({ state: "disconnected", login });
			expect(f.server.logs.some((l) => l.msg === "planner hand-over missed")).toBe(true);
			await f.until(async () => (await f.ctx.domain.runs.list(doc.id))[0]?.disconnected === true, "the card");
			const sent = await f.ctx.planner.handleMessage({
				documentId: doc.id,
				author: login,
				body: "@chopin hi",
			});
			expect(sent).toMatchObject({ status: "refused", message: wording.machineOffline(login) });
			await resumeSignedIn();
		});

		test("the same account attaching with anything but resume first ends the hold: its question is withdrawn", async () => {
			const { f, login, doc, decisionId } = await asking(store);
			await f.server.restart();
			await f.signIn(login);
			await f.attach(login, doc.id, { features: "" });
			await f.until(
				async () => (await f.ctx.domain.decisions.get(decisionId)).status !== "open",
				"withdrawn",
			);
			await f.until(
				async () => (await f.ctx.domain.runs.list(doc.id))[0]?.displayStatus === "stopped",
				"the run shown stopped",
			);
			await f.ctx.planner.settled();
			expect(await f.ctx.store.many(f.ctx.store.sql`SELECT * FROM planner_link_holds`)).toEqual([]);
		});

		test("a link without the feature: nothing withdrawn at the stop; the answer reaches the next Planner once, as its own turn", async () => {
			const { f, login, doc, socket, answer, status } = await asking(store, "github", {});
			await f.server.restart();
			expect((await socket.closed).code).toBe(1012);
			expect(await status()).toBe("open");
			await f.signIn(login);
			// A resumable client with nothing to resume gets it without sending anything first.
			const { socket: next } = await f.attach(login, doc.id, RESUMABLE);
			await answer();
			const start = await next.expect("start");
			next.send({ type: "started", session: start.session });
			const turn = await next.expect("turn");
			expect(turn.prompt).toContain("Chopin (automatic follow-up)");
			expect(turn.prompt).toContain("Ship it?");
			next.send({ type: "turn-end", session: start.session, turn: turn.turn, status: "finished" });
			await f.until(() => f.ctx.planner.status(doc.id).state === "attached", "idle again");
			await f.sync(next);
			expect(next.pending.filter((m) => m.type === "turn" || m.type === "start")).toEqual([]);
		});

		test("an answer given while no Planner is back survives another restart, and reaches the next Planner once", async () => {
			const { f, login, doc, socket, answer, decisionId } = await asking(store, "github", {});
			await f.server.restart();
			expect((await socket.closed).code).toBe(1012);
			await answer();
			await f.until(
				async () =>
					(await f.ctx.store.many(f.ctx.store.sql`SELECT * FROM answer_follow_ups WHERE sent_at IS NULL`))
						.length === 1,
				"the answer kept for a follow-up",
			);
			await f.server.restart();
			await f.signIn(login);
			const { socket: next } = await f.attach(login, doc.id, RESUMABLE);
			const start = await next.expect("start");
			next.send({ type: "started", session: start.session });
			const turn = await next.expect("turn");
			expect(turn.prompt).toContain("Ship it?");
			next.send({ type: "turn-end", session: start.session, turn: turn.turn, status: "finished" });
			await f.until(() => f.ctx.planner.status(doc.id).state === "attached", "idle again");
			await f.sync(next);
			expect(next.pending.filter((m) => m.type === "turn" || m.type === "start")).toEqual([]);
			const rows = await f.ctx.store.many(
				f.ctx.store.sql`SELECT decision_id, sent_at FROM answer_follow_ups`,
			);
			expect(rows).toEqual([{ decision_id: decisionId, sent_at: expect.any(Number) }]);
		});

		test("a link that dropped before the stop is kept with no window: disconnected at once after the restart", async () => {
			const { f, login, doc, socket, resumeSignedIn } = await asking(store);
			socket.terminate();
			await f.until(() => f.ctx.planner.status(doc.id).state === "disconnected", "disconnected");
			await f.ctx.planner.settled();
			await f.server.restart();
			expect(f.ctx.planner.status(doc.id)).toEqual({ state: "disconnected", login });
			await resumeSignedIn();
		});
	});
}

describe("AUTH_MODE=local is never handed over", () => {
	test("a stop ends what the link held, as before: the question is withdrawn and nothing is written", async () => {
		const { f, socket, status } = await asking("sqlite", "local");
		await f.server.restart();
		expect((await socket.closed).code).toBe(1012);
		await f.until(async () => (await status()) !== "open", "withdrawn");
		expect(await f.ctx.store.many(f.ctx.store.sql`SELECT * FROM planner_link_holds`)).toEqual([]);
	});
});
