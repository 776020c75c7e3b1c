// Builds on a real machine socket (chopin.machine.v1): the offer, the one claim and its credential, statuses and
// log lines, an offer sent again after a reconnect, a claimed run never offered again (lost when a hello forgets it),
// a dropped machine's runs (machine-offline, then needs-decision), and duplicate starts.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { RUN_CREDENTIAL_PATTERN } from "@chopin/agent-link/machine";
import { runnableKinds } from "../store/testing";
import {
	BASE,
	type BuildsSetup,
	claim,
	drop,
	expectMessage,
	held,
	liveEvents,
	readRun,
	reconnect,
	runningRun,
	setupBuilds,
	startRun,
	sync,
} from "../testing/builds";
import { LOST_REASON } from "./machine-side";

let clock: ManualClock;
let s: BuildsSetup | undefined;
beforeEach(() => {
	clock = new ManualClock();
});
afterEach(async () => {
	await s?.close();
	s = undefined;
});

for (const kind of runnableKinds()) {
	describe(`a build on its machine [${kind}]`, () => {
		test("offered at once, claimed once with a fresh credential, reported, and ended with its result", async () => {
			s = await setupBuilds(clock, { store: kind });
			const events = liveEvents(s);
			const started = await startRun(s, { brief: "Build step one." });
			expect(started.status).toBe(201);
			expect(started.build).toMatchObject({
				status: "offered",
				displayStatus: "offered",
				kind: "build",
				requestedBy: "ana",
				base: BASE,
				machine: { id: s.machineId, owner: "ana", online: true, label: "ana's laptop" },
				actions: ["stop", "discard"],
			});
			const id = started.build.id;
			expect(id).toMatch(/^run_[a-z2-7]{16}$/);
			const offer = await expectMessage(s.machine, "run-offer");
			expect(offer.run).toMatchObject({
				id,
				kind: "build",
				base: BASE,
				brief: "Build step one.",
				requestedBy: "ana",
				document: { id: s.documentId, title: "Rollout", repository: "octo/score" },
			});
			expect(offer.run.document.url).toBe(`${s.target.publicUrl}/d/${s.documentId}`);

			const token = await claim(s.machine, id);
			expect(token).toMatch(RUN_CREDENTIAL_PATTERN);
			// The credential is handed out once: any later claim is refused.
			s.machine.send({ type: "run-claim", run: id });
			expect(await expectMessage(s.machine, "run-refused")).toMatchObject({ run: id, code: "run-taken" });
			// Only its digest is kept.
			const row = await s.server.context.store.one(
				s.server.context.store.sql`SELECT credential_digest FROM builds WHERE id = ${id}`,
			);
			expect(String(row?.credential_digest)).toMatch(/^[0-9a-f]{64}$/);
			expect(JSON.stringify(s.server.logs)).not.toContain(token);

			s.machine.send({
				type: "run-status",
				run: id,
				status: "running",
				workspace: { path: "/home/ana/.chopin/runs/x/workspace", branch: `chopin/${id}` },
			});
			s.machine.send({
				type: "run-log",
				run: id,
				entries: [
					{ at: clock.now(), kind: "message", text: "Reading the plan." },
					{ at: clock.now(), kind: "tool", text: "git status" },
				],
			});
			await sync(s, s.machine);
			expect(await readRun(s, id)).toMatchObject({
				status: "running",
				workspace: { branch: `chopin/${id}`, path: "/home/ana/.chopin/runs/x/workspace" },
				log: { lastSeq: 2 },
			});
			await s.server.context.builds.report(id, {
				tool: "report_result",
				input: { outcome: "succeeded", summary: "Step one is in." },
			});
			s.machine.send({ type: "run-status", run: id, status: "finished" });
			await sync(s, s.machine);
			const ended = await readRun(s, id);
			expect(ended).toMatchObject({
				status: "succeeded",
				displayStatus: "succeeded",
				live: false,
				result: { outcome: "succeeded", summary: "Step one is in." },
				actions: ["discard"],
			});
			expect(ended.endedAt).toBe(clock.now());

			const updates = events.filter((e) => e.type === "builds.updated");
			expect(updates.map((e) => e.builds[0]?.status)).toEqual([
				"offered",
				"preparing",
				"running",
				"running",
				"succeeded",
			]);
			// Live events carry no machine label and no workspace path: anyone reading the document gets them.
			for (const e of updates) {
				expect(e.builds[0]?.machine.label).toBeUndefined();
				expect(e.builds[0]?.workspace?.path).toBeUndefined();
			}
			const logs = events.filter((e) => e.type === "build.log");
			expect(logs).toEqual([
				{
					type: "build.log",
					documentId: s.documentId,
					build: id,
					lines: [
						{ seq: 1, at: clock.now(), kind: "message", text: "Reading the plan." },
						{ seq: 2, at: clock.now(), kind: "tool", text: "git status" },
					],
				},
			]);
		});
	});
}

describe("offers and claims", () => {
	test("an unclaimed offer goes again after each reconnect; a claimed one never does", async () => {
		s = await setupBuilds(clock);
		const first = (await startRun(s, { brief: "First." })).build.id;
		const second = (await startRun(s, { brief: "Second." })).build.id;
		expect((await expectMessage(s.machine, "run-offer")).run.id).toBe(first);
		expect((await expectMessage(s.machine, "run-offer")).run.id).toBe(second);
		await claim(s.machine, second);
		s.machine.send({ type: "run-status", run: second, status: "running" });
		await sync(s, s.machine);
		await drop(s, s.machine);

		const back = await reconnect(s, [held(second, "running")]);
		expect((await expectMessage(back, "run-offer")).run.id).toBe(first);
		await sync(s, back);
		expect(back.queued.filter((m) => m.type === "run-offer")).toEqual([]);
		expect((await readRun(s, second)).status).toBe("running");
	});

	test("a claim of a stopped offer is refused run-withdrawn, and of another machine's or an unknown run run-not-found", async () => {
		s = await setupBuilds(clock);
		const { build } = await startRun(s);
		await expectMessage(s.machine, "run-offer");
		const stopped = await s.post(`/api/builds/${build.id}/stop`);
		expect(stopped.status).toBe(200);
		expect((await stopped.json()) as object).toMatchObject({
			build: { status: "stopped", reason: "Stopped by @ana before its machine took it." },
		});
		expect(await expectMessage(s.machine, "run-withdrawn")).toEqual({ type: "run-withdrawn", run: build.id });
		s.machine.send({ type: "run-claim", run: build.id });
		expect(await expectMessage(s.machine, "run-refused")).toMatchObject({ code: "run-withdrawn" });
		s.machine.send({ type: "run-claim", run: "run_aaaaaaaaaaaaaaaa" });
		expect(await expectMessage(s.machine, "run-refused")).toMatchObject({ code: "run-not-found" });
	});

	test("a claimed run the machine's hello no longer lists is lost, with a sentence, and never offered again", async () => {
		s = await setupBuilds(clock);
		const { build } = await startRun(s);
		await expectMessage(s.machine, "run-offer");
		await claim(s.machine, build.id);
		await sync(s, s.machine);
		await drop(s, s.machine);
		// A stop meanwhile is held...
		await s.post(`/api/builds/${build.id}/stop`);
		// ...but its daemon restarted: the hello lists nothing.
		const back = await reconnect(s, []);
		await sync(s, back);
		const lost = await readRun(s, build.id);
		expect(lost).toMatchObject({ status: "lost", displayStatus: "lost", reason: LOST_REASON, live: false });
		expect(lost.actions).toEqual(["discard", "start-again"]);
		expect(back.queued.filter((m) => m.type === "run-offer" || m.type === "run-control")).toEqual([]);
		expect(lost.control).toBeUndefined();
		// Starting it again is a new run.
		const again = await startRun(s, { brief: build.brief });
		expect(again.status).toBe(201);
		expect(again.build.id).not.toBe(build.id);
	});
});

describe("a machine that drops", () => {
	test("its runs show machine-offline with offlineUntil, then continue paused when it is back; resume sends run-control", async () => {
		s = await setupBuilds(clock, { env: { MACHINE_OFFLINE_GRACE_MS: "600000" } });
		const build = await runningRun(s);
		const events = liveEvents(s);
		const droppedAt = clock.now();
		await drop(s, s.machine);
		expect(await readRun(s, build.id)).toMatchObject({
			status: "running",
			displayStatus: "machine-offline",
			offlineUntil: droppedAt + 600_000,
			machine: { online: false },
		});
		expect(
			events.some((e) => e.type === "builds.updated" && e.builds[0]?.displayStatus === "machine-offline"),
		).toBe(true);

		// Back within the grace, holding it paused (the drop paused it): it is paused until a person resumes it.
		const back = await reconnect(s, [held(build.id, "paused")]);
		await sync(s, back);
		const paused = await readRun(s, build.id);
		expect(paused).toMatchObject({ status: "paused", displayStatus: "paused" });
		expect(paused.actions).toEqual(["stop", "resume", "discard"]);
		const resumed = await s.post(`/api/builds/${build.id}/resume`);
		expect(resumed.status).toBe(200);
		const control = await expectMessage(back, "run-control");
		expect(control).toMatchObject({ run: build.id, action: "resume" });
		expect(((await resumed.json()) as { build: { control: unknown } }).build.control).toMatchObject({
			action: "resume",
			by: "ana",
			state: "sent",
		});
		back.send({ type: "run-control-result", request: control.request, ok: true });
		back.send({ type: "run-status", run: build.id, status: "running" });
		await sync(s, back);
		expect(await readRun(s, build.id)).toMatchObject({
			status: "running",
			control: { action: "resume", state: "confirmed" },
		});
	});

	test("past the grace its runs need a person's decision: discard, or leave them for the machine's return", async () => {
		s = await setupBuilds(clock, { env: { MACHINE_OFFLINE_GRACE_MS: "600000" } });
		const { build } = await startRun(s);
		await expectMessage(s.machine, "run-offer");
		await claim(s.machine, build.id);
		await sync(s, s.machine);
		await drop(s, s.machine);
		const events = liveEvents(s);
		await clock.advance(600_000);
		await s.server.context.builds.settled();
		expect(await readRun(s, build.id)).toMatchObject({
			status: "preparing",
			displayStatus: "needs-decision",
		});
		expect(events.at(-1)).toMatchObject({
			type: "builds.updated",
			builds: [{ displayStatus: "needs-decision" }],
		});

		// Discarded while away: the discard is held and goes to the machine when it is back holding the run.
		const discarded = await s.post(`/api/builds/${build.id}/discard`);
		expect(discarded.status).toBe(200);
		expect(events.at(-1)).toEqual({
			type: "builds.updated",
			documentId: s.documentId,
			builds: [],
			removed: [build.id],
		});
		const list = await s.get(`/api/documents/${s.documentId}/builds`);
		expect(((await list.json()) as { builds: unknown[] }).builds).toEqual([]);
		const back = await reconnect(s, [held(build.id, "paused")]);
		expect(await expectMessage(back, "run-control")).toMatchObject({ run: build.id, action: "discard" });
	});

	test("a stop while the machine is away is held, shown, and sent after its next hello", async () => {
		s = await setupBuilds(clock);
		const build = await runningRun(s);
		await drop(s, s.machine);
		const stopped = await s.post(`/api/builds/${build.id}/stop`);
		expect(((await stopped.json()) as { build: unknown }).build).toMatchObject({
			status: "running",
			displayStatus: "machine-offline",
			control: { action: "stop", by: "ana", state: "held" },
		});
		// A resume cannot wait for it.
		const resume = await s.post(`/api/builds/${build.id}/resume`);
		expect(resume.status).toBe(409);

		await stopConfirmedAfterReconnect(build.id);
	});
});

/** The machine comes back with the run paused, is sent the held stop once, confirms it and reports the run stopped. */
async function stopConfirmedAfterReconnect(run: string) {
	if (!s) throw new Error("no builds set up");
	const back = await reconnect(s, [held(run, "paused")]);
	const control = await expectMessage(back, "run-control");
	expect(control).toMatchObject({ run, action: "stop" });
	back.send({ type: "run-control-result", request: control.request, ok: true });
	back.send({ type: "run-status", run, status: "stopped", reason: "Stopped as @ana asked." });
	await sync(s, back);
	expect(await readRun(s, run)).toMatchObject({
		status: "stopped",
		reason: "Stopped as @ana asked.",
		control: { action: "stop", state: "confirmed" },
	});
	return back;
}

describe("controls", () => {
	test("a control the machine does not answer within 10 s is unconfirmed, never done; a late answer settles it", async () => {
		s = await setupBuilds(clock);
		const build = await runningRun(s);
		await s.post(`/api/builds/${build.id}/stop`);
		const control = await expectMessage(s.machine, "run-control");
		const events = liveEvents(s);
		await clock.advance(10_000);
		await s.server.context.builds.settled();
		expect(await readRun(s, build.id)).toMatchObject({
			status: "running",
			control: { action: "stop", state: "unconfirmed" },
		});
		expect(events.at(-1)).toMatchObject({ builds: [{ control: { state: "unconfirmed" } }] });
		s.machine.send({ type: "run-control-result", request: control.request, ok: false, message: "Not now." });
		await sync(s, s.machine);
		expect((await readRun(s, build.id)).control).toMatchObject({ state: "refused", message: "Not now." });
	});

	test("a stop sent on a connection that then dropped unanswered is sent again after the next hello, once", async () => {
		s = await setupBuilds(clock);
		const build = await runningRun(s);
		await s.post(`/api/builds/${build.id}/stop`);
		// Written into a socket the network then dropped: the machine never had it, or its answer was lost.
		await expectMessage(s.machine, "run-control");
		await drop(s, s.machine);
		expect((await readRun(s, build.id)).control).toMatchObject({ action: "stop", state: "sent" });

		const back = await stopConfirmedAfterReconnect(build.id);
		// Answered: a later hello sends nothing again.
		await drop(s, back);
		const again = await reconnect(s, [held(build.id, "stopped")]);
		await sync(s, again);
		expect(again.queued.filter((m) => m.type === "run-control")).toEqual([]);
	});

	test("a revoked machine's runs are lost", async () => {
		s = await setupBuilds(clock);
		const { build } = await startRun(s);
		await expectMessage(s.machine, "run-offer");
		await claim(s.machine, build.id);
		await sync(s, s.machine);
		await s.server.context.machines.revoke(s.machineId);
		await s.server.context.builds.settled();
		expect(await readRun(s, build.id)).toMatchObject({
			status: "lost",
			reason:
				"@ana's machine was disconnected from Chopin, so this run was lost. Start it again if it is still needed.",
		});
	});
});

describe("duplicate starts and busy documents", () => {
	test("the same key, or the same document, kind, base and brief while not final, is the same run", async () => {
		s = await setupBuilds(clock);
		const first = await startRun(s, { key: "k-1" });
		expect(first.status).toBe(201);
		const sameKey = await startRun(s, { key: "k-1" });
		expect([sameKey.status, sameKey.build.id]).toEqual([200, first.build.id]);
		const sameStart = await startRun(s);
		expect([sameStart.status, sameStart.build.id]).toEqual([200, first.build.id]);
		const otherKind = await startRun(s, { kind: "investigation" });
		expect(otherKind.status).toBe(201);
		const reused = await startRun(s, { key: "k-1", brief: "Something else." });
		expect([reused.status, reused.body.code]).toEqual([409, "build-key-reused"]);
		// Exactly two offers went out.
		await expectMessage(s.machine, "run-offer");
		await expectMessage(s.machine, "run-offer");
		await sync(s, s.machine);
		expect(s.machine.queued.filter((m) => m.type === "run-offer")).toEqual([]);
		// Once it ended, the same start makes a new run (and the same key still names the old one).
		await s.post(`/api/builds/${first.build.id}/stop`);
		const fresh = await startRun(s);
		expect(fresh.status).toBe(201);
		expect((await startRun(s, { key: "k-1" })).build.id).toBe(first.build.id);
		// Concurrent duplicate starts make one run.
		const together = await Promise.all([1, 2, 3].map(() => startRun(s!, { brief: "Together." })));
		expect(new Set(together.map((t) => t.build.id)).size).toBe(1);
		expect(together.map((t) => t.status).sort()).toEqual([200, 200, 201]);
	});

	test("a document with a live run is busy, so its Planner is never withdrawn as unused", async () => {
		s = await setupBuilds(clock);
		const { machines } = s.server.context;
		expect(await machines.isBusy(s.documentId)).toBe(false);
		const { build } = await startRun(s);
		expect(await machines.isBusy(s.documentId)).toBe(true);
		await s.post(`/api/builds/${build.id}/stop`);
		expect(await machines.isBusy(s.documentId)).toBe(false);
	});
});
