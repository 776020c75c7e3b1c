// Spec "After a server restart" with two real server processes on the same port, data dir and database (SQLite and
// PostgreSQL), in github mode against the GitHub emulator process. The Planner is the package's client (connectAgent,
// then reconnectAgent with the resume, resumable by default) on a paired machine's Planner credential, asking one
// question; the test decides when it may come back. SIGTERM hands the question over: the answer given in between or
// after arrives exactly once and a Stop pressed in between is sent first after resumed. kill -9 with the link live
// loses its work (the resume keeps nothing, the question settles cancelled locally, the answer comes as a turn of its
// own); kill -9 after the link had dropped keeps it (the hold was written at the drop) and the answer arrives once.
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { eventually } from "../../apps/cli/src/testing/cli-process";
import { runnableKinds } from "../../apps/server/src/store/testing";
import type { QuestionResult, Session } from "../../packages/agent-link/src/client/index";
import { fullCard } from "../../packages/agent-link/src/testing/examples";
import { countsFor } from "./support/counts";
import { GitHubServer } from "./support/github-server";
import { attachPlanner, type PlannerLink } from "./support/planner-link";

setDefaultTimeout(120_000);
const counts = countsFor("restart-handover");

/** A resumable Planner that asked "Ship it?" in its first turn; it comes back only when let. */
interface Asking {
	document: string;
	decision: string;
	planner: PlannerLink;
	session: Session;
	request: string;
	/** Every settlement of the question's promise (a promise settles once; counted all the same). */
	settled: QuestionResult[];
	/** Lets the client reconnect after its link closed. */
	letBack(): void;
}

for (const store of runnableKinds()) {
	describe(`a restart with two server processes [${store}]`, () => {
		let world: GitHubServer;
		let planner: PlannerLink | undefined;
		beforeAll(async () => {
			world = await GitHubServer.start({ store });
		});
		afterEach(async () => {
			await planner?.close();
			planner = undefined;
			await world.ensureRunning();
		});
		afterAll(async () => {
			await world?.close();
		});

		/** A document whose Planner asked a question in a finished turn (with a live run when asked). */
		async function asking(title: string, options: { liveRun?: boolean } = {}): Promise<Asking> {
			const document = await world.createDocument(title);
			const token = await world.plannerToken(document);
			const settled: QuestionResult[] = [];
			let request: string | undefined;
			let release: () => void = () => {};
			let gate = new Promise<void>((resolve) => {
				release = resolve;
			});
			planner = await attachPlanner({
				url: world.publicUrl,
				token,
				document,
				onTurn: (session, prompt) => {
					if (!prompt.includes("is this ready")) return;
					if (options.liveRun) {
						// A live run keeps the session through the Stop, so the question stays open.
						session.reportRuns({ active: ["run-1"], paused: [], cards: [{ ...fullCard, ended: undefined }] });
					}
					const asked = session.ask({ method: "confirm", title: "Ship it?", message: "" });
					request = asked.request;
					void asked.then((result) => settled.push(result));
				},
				beforeReconnect: () => gate,
			});
			expect((await world.say(document, "@chopin is this ready?")).status).toBe(201);
			const decision = await eventually("the open Decision", async () =>
				(await world.decisions(document)).find((d) => d.status === "open"),
			);
			await eventually("the turn over", async () => (await world.plannerState(document)) === "attached");
			const link = planner;
			return {
				document,
				decision: decision.id,
				planner: link,
				session: link.sessions[0]!,
				request: request!,
				settled,
				letBack: () => {
					release();
					gate = new Promise<void>((resolve) => {
						release = resolve;
					});
				},
			};
		}

		/** A Chat turn sent now and seen at the Planner: every frame the server wrote before it has arrived. */
		async function sync(a: Asking, body: string): Promise<void> {
			await eventually("the Planner idle", async () => (await world.plannerState(a.document)) === "attached");
			expect((await world.say(a.document, `@chopin ${body}`)).status).toBe(201);
			await eventually(`the turn "${body}" at the Planner`, () =>
				a.planner.turns.some((p) => p.includes(body)),
			);
		}

		/** Cuts the client's socket (as its process dying would) and waits until the server stored the hold. */
		async function dropped(a: Asking): Promise<void> {
			const from = world.server.logs.length;
			a.planner.cut();
			await world.server.waitFor(
				(l) =>
					world.server.logs.indexOf(l) >= from &&
					l.msg === "agent link dropped, work kept" &&
					l.document === a.document,
				"the drop kept",
			);
			// The row is written just after that line, in the background; what follows needs it stored.
			await eventually("the hold stored", async () => (await world.holdRows(a.document)) === 1);
		}

		const results = (a: Asking) => a.planner.count("input-result", (m) => m.request === a.request);
		const status = async (a: Asking) =>
			(await world.decisions(a.document)).find((d) => d.id === a.decision)?.status;

		test(
			"SIGTERM, answered before the client is back: the question settles answered once, never withdrawn",
			counts.guard(async () => {
				const a = await asking("Answered in between");
				await world.stopProcess();
				counts.fault();
				await eventually("the link closed", () => a.planner.closes.length > 0);
				expect(a.planner.count("restarting")).toBe(1);
				expect(a.planner.closes[0]).toMatchObject({ code: 1012 });
				expect(a.planner.closes[0]!.resume).toBeDefined();
				// The old process wrote the document's one hold row at its cut.
				expect(await world.holdRows(a.document)).toBe(1);
				await world.startProcess();
				// The next process rebuilt the hold in its window: shown attached, the Decision still open.
				expect(await world.plannerState(a.document)).toBe("attached");
				expect(await status(a)).toBe("open");
				expect((await world.answer(a.decision)).status).toBe(200);
				a.letBack();
				await eventually("the question settled", () => a.settled.length > 0);
				expect(a.settled).toEqual([expect.objectContaining({ status: "answered", value: true })]);
				const resumed = a.planner.received.filter((m) => m.type === "resumed");
				expect(resumed).toEqual([
					{ type: "resumed", sessions: [{ session: a.session.id, requests: [a.request] }] },
				]);
				await sync(a, "after the answer");
				expect(results(a)).toBe(1);
				expect(a.settled).toHaveLength(1);
				expect(await status(a)).toBe("answered");
				expect(await world.holdRows(a.document)).toBe(0);
				counts.add("answers delivered once", 1);
			}),
		);

		test(
			"SIGTERM, answered after the client resumed: the answer goes straight to it, once",
			counts.guard(async () => {
				const a = await asking("Answered after");
				await world.stopProcess();
				counts.fault();
				await world.startProcess();
				a.letBack();
				await eventually("resumed", () => a.planner.count("resumed") === 1);
				expect(a.planner.received.find((m) => m.type === "resumed")).toEqual({
					type: "resumed",
					sessions: [{ session: a.session.id, requests: [a.request] }],
				});
				expect(await status(a)).toBe("open");
				expect((await world.answer(a.decision)).status).toBe(200);
				await eventually("the question settled", () => a.settled.length > 0);
				expect(a.settled).toEqual([expect.objectContaining({ status: "answered", value: true })]);
				await sync(a, "after the answer");
				expect(results(a)).toBe(1);
				expect(a.settled).toHaveLength(1);
				counts.add("answers delivered once", 1);
			}),
		);

		// A Stop pressed on the hold the next process rebuilt, before its client is back, is held in the row and
		// sent first after resumed, once (spec: Stop is held, not lost; After a server restart).
		test("SIGTERM with a Stop pressed in between: the Stop is sent first after resumed, once", async () => {
			const a = await asking("Stopped in between", { liveRun: true });
			await world.stopProcess();
			await world.startProcess();
			const pressed = await world.page("POST", `/api/documents/${a.document}/planner/stop`);
			expect(pressed.status).toBe(202);
			expect(await pressed.json()).toEqual({ sent: 0 });
			a.letBack();
			await eventually("the Stop at the Planner", () => a.planner.stops.length > 0);
			const types = a.planner.received.map((m) => m.type);
			expect(types[types.indexOf("resumed") + 1]).toBe("stop");
			expect(a.planner.stops).toEqual([{ session: a.session.id }]);
			await sync(a, "after the stop");
			expect(a.planner.count("stop")).toBe(1);
		});

		test(
			"a Stop held before a SIGTERM (the link had dropped) is carried over: sent first after resumed, once",
			counts.guard(async () => {
				const a = await asking("Stopped before", { liveRun: true });
				await dropped(a);
				const pressed = await world.page("POST", `/api/documents/${a.document}/planner/stop`);
				expect(pressed.status).toBe(202);
				expect(await pressed.json()).toEqual({ sent: 0 });
				await world.stopProcess();
				counts.fault();
				await world.startProcess();
				// It had dropped before the cut: no window, disconnected at once.
				expect(await world.plannerState(a.document)).toBe("disconnected");
				a.letBack();
				await eventually("the Stop at the Planner", () => a.planner.stops.length > 0);
				const types = a.planner.received.map((m) => m.type);
				expect(types.filter((t) => t === "resumed")).toHaveLength(1);
				expect(types[types.indexOf("resumed") + 1]).toBe("stop");
				expect(a.planner.stops).toEqual([{ session: a.session.id }]);
				// The run was live, so the Stop kept the question: still open, answered once.
				expect(await status(a)).toBe("open");
				expect((await world.answer(a.decision)).status).toBe(200);
				await eventually("the question settled", () => a.settled.length > 0);
				expect(a.settled).toEqual([expect.objectContaining({ status: "answered", value: true })]);
				await sync(a, "after the stop");
				expect(a.planner.count("stop")).toBe(1);
				expect(results(a)).toBe(1);
				counts.add("held stops delivered once", 1);
			}),
		);

		test(
			"kill -9 with the link live: its work is lost; the answer reaches the Planner once as a turn of its own",
			counts.guard(async () => {
				const a = await asking("Crashed live");
				await world.killProcess();
				counts.fault();
				await eventually("the link closed", () => a.planner.closes.length > 0);
				expect(a.planner.closes[0]!.resume).toBeDefined();
				// A crash writes nothing: the live link's hold was never stored.
				expect(await world.holdRows(a.document)).toBe(0);
				await world.startProcess();
				// No hold survived: the resume keeps nothing and the question settles cancelled on the client.
				a.letBack();
				await eventually("the question settled", () => a.settled.length > 0);
				expect(a.planner.received.filter((m) => m.type === "resumed")).toEqual([
					{ type: "resumed", sessions: [] },
				]);
				expect(a.settled).toEqual([expect.objectContaining({ status: "cancelled", local: true })]);
				expect(await world.holdRows(a.document)).toBe(0);
				await eventually(
					"the Planner idle",
					async () => (await world.plannerState(a.document)) === "attached",
				);
				// The Decision is still there to answer; nobody waits on it, so it becomes an automatic follow-up.
				expect((await world.answer(a.decision)).status).toBe(200);
				const followUp = (p: string) => p.includes("Chopin (automatic follow-up)") && p.includes("Ship it?");
				await eventually("the follow-up turn", () => a.planner.turns.some(followUp));
				await sync(a, "after the follow-up");
				expect(a.planner.turns.filter(followUp)).toHaveLength(1);
				expect(results(a)).toBe(0);
				expect(a.settled).toHaveLength(1);
				counts.add("follow-up turns after a crash", 1);
			}),
		);

		test(
			"kill -9 after the link had dropped: the hold survives without a window; the resume gets the answer once",
			counts.guard(async () => {
				const a = await asking("Crashed after a drop");
				await dropped(a);
				await world.killProcess();
				counts.fault();
				await world.startProcess();
				// Written at the drop, so the next process finds it disconnected at once (no window).
				expect(await world.plannerState(a.document)).toBe("disconnected");
				expect(await status(a)).toBe("open");
				expect((await world.answer(a.decision)).status).toBe(200);
				a.letBack();
				await eventually("the question settled", () => a.settled.length > 0);
				expect(a.settled).toEqual([expect.objectContaining({ status: "answered", value: true })]);
				expect(a.planner.received.filter((m) => m.type === "resumed")).toEqual([
					{ type: "resumed", sessions: [{ session: a.session.id, requests: [a.request] }] },
				]);
				await sync(a, "after the crash");
				expect(results(a)).toBe(1);
				expect(a.settled).toHaveLength(1);
				expect(a.planner.turns.filter((p) => p.includes("automatic follow-up"))).toEqual([]);
				counts.add("answers delivered once", 1);
			}),
		);
	});
}
