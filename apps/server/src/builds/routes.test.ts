// The builds API over HTTP: who may start, read, stop, resume and discard; the refusals (no machine, an offline
// one, one that cannot run builds, bad bodies, archived documents); the start form's base; what only the owner sees.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import {
	BASE,
	type BuildsSetup,
	claim,
	drop,
	expectMessage,
	readRun,
	runningRun,
	setupBuilds,
	startRun,
	sync,
} from "../testing/builds";
import { pageRequest } from "../testing/machines";
import { signInLocally } from "../testing/sign-in";
import type { BuildView } from "./build-view";

let clock: ManualClock;
let s: BuildsSetup | undefined;
beforeEach(() => {
	clock = new ManualClock();
});
afterEach(async () => {
	await s?.close();
	s = undefined;
});

const body = async (res: Response) => (await res.json()) as Record<string, unknown>;

describe("POST /api/documents/:id/builds", () => {
	test("refusals: a reader, an unknown document, a bad body, an archived document", async () => {
		s = await setupBuilds(clock);
		const { jar: ben } = await signInLocally(s.target, "ben");
		const reader = await startRun(s, {}, ben);
		expect([reader.status, reader.body.code]).toEqual([403, "repository-forbidden"]);
		const unknown = await s.post("/api/documents/zzzzzzzzzzzz/builds", {
			kind: "build",
			brief: "x",
			base: BASE,
		});
		expect([unknown.status, (await body(unknown)).code]).toEqual([404, "document-not-found"]);
		for (const bad of [
			{ kind: "deploy", brief: "x", base: BASE },
			{ kind: "build", brief: "", base: BASE },
			{ kind: "build", brief: "x", base: "main" },
			{ kind: "build", brief: "x", base: BASE, key: "has spaces" },
			{ kind: "build", brief: "x", base: BASE, extra: 1 },
		]) {
			const res = await s.post(`/api/documents/${s.documentId}/builds`, bad);
			expect([res.status, (await body(res)).code]).toEqual([400, "invalid-request"]);
		}
		await s.server.context.domain.documents.archive(s.documentId);
		const archived = await startRun(s);
		expect([archived.status, archived.body.code]).toEqual([409, "document-archived"]);
	});

	test("no machine of the person's: 409 no-machine with the spec's kind of sentence (another person's machine never runs it)", async () => {
		s = await setupBuilds(clock);
		const { jar: cy } = await signInLocally(s.target, "cy");
		const refused = await startRun(s, { kind: "investigation" }, cy);
		expect(refused.status).toBe(409);
		expect(refused.body).toMatchObject({
			code: "no-machine",
			message:
				"Connect a machine to start this investigation. Choose one with the machine button, or run `chopin connect` on a machine that can build.",
		});
	});

	test("the chosen machine offline: 409 machine-offline naming it", async () => {
		s = await setupBuilds(clock);
		// Pinned for the repository, then away: the pin is not passed over.
		await pageRequest(s.target, s.jar, "PUT", "/api/repositories/octo/score/machine", {
			machine: s.machineId,
		});
		await drop(s, s.machine);
		const refused = await startRun(s);
		expect(refused.status).toBe(409);
		expect(refused.body).toMatchObject({
			code: "machine-offline",
			message: `Your machine "ana's laptop" is offline, so the build wasn't started. Start it again when it's back.`,
		});
	});

	test("a machine that cannot run builds: 409 runner-unavailable with its reason, or for a CLI from before builds", async () => {
		s = await setupBuilds(clock, {
			runner: { available: false, reason: "no ACP agent command is configured" },
		});
		const refused = await startRun(s);
		expect(refused.body).toMatchObject({
			code: "runner-unavailable",
			message: `Your machine "ana's laptop" can't run builds: no ACP agent command is configured.`,
		});
		await s.close();
		s = await setupBuilds(clock, { runner: null });
		const old = await startRun(s);
		expect([old.status, old.body.code]).toEqual([409, "runner-unavailable"]);
	});
});

describe("reading runs", () => {
	test("members list and read runs; the machine's label and the workspace path only for its owner", async () => {
		s = await setupBuilds(clock);
		const { build } = await startRun(s);
		await expectMessage(s.machine, "run-offer");
		await claim(s.machine, build.id);
		s.machine.send({
			type: "run-status",
			run: build.id,
			status: "running",
			workspace: { path: "/home/ana/.chopin/runs/w", branch: "chopin/w" },
		});
		await sync(s, s.machine);
		expect((await readRun(s, build.id)).workspace).toEqual({
			path: "/home/ana/.chopin/runs/w",
			branch: "chopin/w",
		});
		const { jar: ben } = await signInLocally(s.target, "ben");
		const seen = await readRun(s, build.id, ben);
		expect(seen.workspace).toEqual({ branch: "chopin/w" });
		expect(seen.machine).toEqual({ id: s.machineId, owner: "ana", online: true });
		const list = (await body(await s.get(`/api/documents/${s.documentId}/builds`, ben)))
			.builds as BuildView[];
		expect(list.map((b) => b.id)).toEqual([build.id]);
		expect(list[0]!.workspace).toEqual({ branch: "chopin/w" });
		expect((await s.get("/api/builds/run_aaaaaaaaaaaaaaaa")).status).toBe(404);
	});

	test("the log, a page at a time, tokens masked", async () => {
		s = await setupBuilds(clock);
		const { build } = await startRun(s);
		await expectMessage(s.machine, "run-offer");
		await claim(s.machine, build.id);
		const token = `ghp_${"x".repeat(36)}`;
		s.machine.send({
			type: "run-log",
			run: build.id,
			entries: [1, 2, 3].map((n) => ({
				at: n,
				kind: "output" as const,
				text: n === 2 ? `token ${token}` : `line ${n}`,
			})),
		});
		await sync(s, s.machine);
		const first = await body(await s.get(`/api/builds/${build.id}/log?limit=2`));
		expect(first).toEqual({
			lines: [
				{ seq: 1, at: 1, kind: "output", text: "line 1" },
				{ seq: 2, at: 2, kind: "output", text: "token [redacted]" },
			],
			more: true,
		});
		expect(await body(await s.get(`/api/builds/${build.id}/log?after=2`))).toEqual({
			lines: [{ seq: 3, at: 3, kind: "output", text: "line 3" }],
			more: false,
		});
		const bad = await s.get(`/api/builds/${build.id}/log?after=x`);
		expect([bad.status, (await body(bad)).field]).toEqual([400, "after"]);
	});

	test("the start form's base: the chosen machine and its checkout's HEAD of the repository", async () => {
		s = await setupBuilds(clock);
		expect(await body(await s.get(`/api/documents/${s.documentId}/builds/base`))).toEqual({
			document: s.documentId,
			machine: { id: s.machineId, label: "ana's laptop", owner: "ana", online: true },
			head: BASE,
			runner: { available: true },
		});
		const { jar: cy } = await signInLocally(s.target, "cy");
		expect(await body(await s.get(`/api/documents/${s.documentId}/builds/base`, cy))).toEqual({
			document: s.documentId,
			machine: null,
			head: null,
			runner: null,
		});
	});
});

describe("stop, resume, discard", () => {
	test("write access; resume only a paused run on an online machine; stopping an ended run changes nothing", async () => {
		s = await setupBuilds(clock);
		const build = await runningRun(s);
		const { jar: ben } = await signInLocally(s.target, "ben");
		for (const action of ["stop", "resume", "discard"]) {
			const res = await s.post(`/api/builds/${build.id}/${action}`, undefined, ben);
			expect([res.status, (await body(res)).code]).toEqual([403, "repository-forbidden"]);
		}
		const notPaused = await s.post(`/api/builds/${build.id}/resume`);
		expect(await body(notPaused)).toMatchObject({
			code: "build-not-paused",
			message: "This run is running, and only a paused run can be resumed.",
		});
		const stop = await s.post(`/api/builds/${build.id}/stop`);
		expect(stop.status).toBe(200);
		expect(await expectMessage(s.machine, "run-control")).toMatchObject({ run: build.id, action: "stop" });
		s.machine.send({ type: "run-status", run: build.id, status: "stopped" });
		await sync(s, s.machine);
		const again = await s.post(`/api/builds/${build.id}/stop`);
		expect(((await body(again)).build as BuildView).status).toBe("stopped");
		await sync(s, s.machine);
		expect(s.machine.queued.filter((m) => m.type === "run-control")).toEqual([]);

		const discard = await s.post(`/api/builds/${build.id}/discard`);
		expect(await body(discard)).toEqual({ discarded: build.id });
		expect(await expectMessage(s.machine, "run-control")).toMatchObject({ run: build.id, action: "discard" });
		expect((await s.get(`/api/builds/${build.id}`)).status).toBe(404);
		expect((await s.post(`/api/builds/${build.id}/stop`)).status).toBe(404);
		// The row is kept.
		const row = await s.server.context.store.one(
			s.server.context.store.sql`SELECT discarded_at FROM builds WHERE id = ${build.id}`,
		);
		expect(Number(row?.discarded_at)).toBe(clock.now());
	});
});
