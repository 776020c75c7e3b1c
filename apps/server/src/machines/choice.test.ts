import { afterEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import type { MachineServerMessage } from "@chopin/agent-link/machine";
import { runnableKinds } from "../store/testing";
import {
	helloMachine,
	LOCAL_ENV,
	type MachineClient,
	pageRequest,
	pairLocally,
	type Target,
} from "../testing/machines";
import { startTestServer, type TestServer } from "../testing/server";
import { type CookieJar, signInLocally } from "../testing/sign-in";
import type { Withdrawal } from "./assignments";
import { UNUSED_AFTER_MS } from "./assignments";

const open: TestServer[] = [];
const sockets: MachineClient[] = [];
afterEach(async () => {
	for (const s of sockets.splice(0)) s.close();
	for (const s of open.splice(0)) await s.close();
});

interface World {
	clock: ManualClock;
	server: TestServer;
	target: Target;
	ana: CookieJar;
	cy: CookieJar;
	machines: Record<"a1" | "a2" | "c1", { credential: string; machineId: string }>;
	documents: { d1: string; d2: string; other: string };
	withdrawn: Withdrawal[];
}

async function world(
	store: "sqlite" | "postgres" = "sqlite",
	env: Record<string, string> = {},
): Promise<World> {
	const clock = new ManualClock();
	const server = await startTestServer({ clock, store, env: { ...LOCAL_ENV, ...env } });
	open.push(server);
	const target: Target = { fetch: (req) => server.fetch(req), publicUrl: server.context.config.publicUrl };
	const { jar: ana } = await signInLocally(target, "ana");
	const { jar: cy } = await signInLocally(target, "cy");
	const a1 = await pairLocally(target, ana, { label: "a1", repositories: ["octo/score", "octo/other"] });
	const a2 = await pairLocally(target, ana, { label: "a2", repositories: ["octo/other"] });
	const c1 = await pairLocally(target, cy, { label: "c1" });
	const docs = server.context.domain.documents;
	const d1 = await docs.create({ repository: "octo/score", title: "One", createdBy: "ana" });
	const d2 = await docs.create({ repository: "octo/score", title: "Two", createdBy: "ana" });
	const other = await docs.create({ repository: "octo/other", title: "Other", createdBy: "ana" });
	const withdrawn: Withdrawal[] = [];
	server.context.machines.onWithdrawn((w) => withdrawn.push(w));
	return {
		clock,
		server,
		target,
		ana,
		cy,
		machines: { a1, a2, c1 },
		documents: { d1: d1.id, d2: d2.id, other: other.id },
		withdrawn,
	};
}

async function online(w: World, name: keyof World["machines"], repositories = ["octo/score"]) {
	const { client } = await helloMachine(w.server.url, w.machines[name].credential, repositories);
	sockets.push(client);
	return client;
}

/** The next `planners` message, as document ids. */
async function plannersOf(w: World, client: MachineClient): Promise<string[]> {
	await w.server.context.machines.settled();
	const message: MachineServerMessage = await client.next();
	if (message.type !== "planners") throw new Error(`expected planners, got ${JSON.stringify(message)}`);
	return message.planners.map((p) => p.document.id);
}

describe("machine choice", () => {
	test("nobody's machine online: none; then the owner's most recently active idle one, and its planners set", async () => {
		const w = await world();
		const { machines } = w.server.context;
		expect(await machines.requestPlanner(w.documents.d1)).toEqual({ status: "none", reason: "no-machine" });
		const a1 = await online(w, "a1");
		await w.clock.advance(1_000);
		const a2 = await online(w, "a2", ["octo/other"]);
		// Both idle; a1 has a checkout of the document's repository, so it goes first.
		expect(await machines.requestPlanner(w.documents.d1)).toMatchObject({
			status: "assigned",
			machineId: w.machines.a1.machineId,
			login: "ana",
			rule: "recent",
			already: false,
		});
		expect(await plannersOf(w, a1)).toEqual([w.documents.d1]);
		// For the other repository both have a checkout: the more recent, a2.
		expect(await machines.requestPlanner(w.documents.other)).toMatchObject({
			machineId: w.machines.a2.machineId,
			rule: "recent",
		});
		const [assignment] = (
			(await (async () => {
				await machines.settled();
				return a2.next();
			})()) as Extract<MachineServerMessage, { type: "planners" }>
		).planners;
		expect(assignment).toEqual({
			document: {
				id: w.documents.other,
				url: `${w.server.context.config.publicUrl}/d/${w.documents.other}`,
				title: "Other",
				repository: "octo/other",
			},
		});
		// Asking again changes nothing.
		expect(await machines.requestPlanner(w.documents.d1)).toMatchObject({ already: true });
	});

	test("an idle machine goes before a busy one; the machine that last ran work for the document goes first", async () => {
		const w = await world();
		const { machines } = w.server.context;
		const a1 = await online(w, "a1");
		await w.clock.advance(1_000);
		const a2 = await online(w, "a2");
		const busy = { type: "report" as const, checkouts: [], planners: [], sandbox: { kind: "none" as const } };
		a2.send({ ...busy, runs: [{ id: "r1", status: "running", worktree: "/w/r1" }] });
		await a2.roundTrip();
		await machines.settled();
		expect(await machines.requestPlanner(w.documents.d1)).toMatchObject({
			machineId: w.machines.a1.machineId,
		});
		await plannersOf(w, a1);

		// a2 runs work for d2 (a run of the document), then is idle again.
		a2.send({
			...busy,
			runs: [{ id: "r2", status: "running", worktree: "/w/r2", document: w.documents.d2 }],
		});
		a2.send({ ...busy, runs: [] });
		await a2.roundTrip();
		await machines.settled();
		await w.clock.advance(1_000);
		a1.send({ ...busy, runs: [] });
		await a1.roundTrip();
		await machines.settled();
		expect(await machines.requestPlanner(w.documents.d2)).toMatchObject({
			machineId: w.machines.a2.machineId,
			rule: "last-work",
		});
	});

	test("a pin, then an override, move the document; offline explicit choices say offline", async () => {
		const w = await world();
		const { machines } = w.server.context;
		const a2 = await online(w, "a2");
		await w.clock.advance(1_000);
		const a1 = await online(w, "a1");
		expect(await machines.requestPlanner(w.documents.d1)).toMatchObject({
			machineId: w.machines.a1.machineId,
		});
		expect(await plannersOf(w, a1)).toEqual([w.documents.d1]);

		const pinned = await pageRequest(w.target, w.ana, "PUT", "/api/repositories/octo/score/machine", {
			machine: w.machines.a2.machineId,
		});
		expect(pinned.status).toBe(200);
		expect(await plannersOf(w, a1)).toEqual([]);
		expect(await plannersOf(w, a2)).toEqual([w.documents.d1]);
		expect(w.withdrawn).toEqual([
			{ documentId: w.documents.d1, machineId: w.machines.a1.machineId, reason: "moved" },
		]);

		const overridden = await pageRequest(w.target, w.ana, "PUT", `/api/documents/${w.documents.d1}/machine`, {
			machine: w.machines.a1.machineId,
		});
		expect(overridden.status).toBe(200);
		expect(await plannersOf(w, a2)).toEqual([]);
		expect(await plannersOf(w, a1)).toEqual([w.documents.d1]);
		const shown = await pageRequest(w.target, w.ana, "GET", `/api/documents/${w.documents.d1}/machine`);
		expect(await shown.json()).toEqual({
			document: w.documents.d1,
			override: w.machines.a1.machineId,
			pin: w.machines.a2.machineId,
			assigned: { machine: w.machines.a1.machineId, online: true, owner: "ana", label: "a1" },
		});
		// cy reads the document too: the machine is ana's, named by its owner, not its label.
		const forCy = await pageRequest(w.target, w.cy, "GET", `/api/documents/${w.documents.d1}/machine`);
		expect(((await forCy.json()) as { assigned: unknown }).assigned).toEqual({
			machine: w.machines.a1.machineId,
			online: true,
			owner: "ana",
		});

		// The override's machine goes offline: asking says so rather than using another behind ana's back.
		a1.close();
		await a1.closed;
		await waitOffline(w, w.machines.a1.machineId);
		expect(await machines.requestPlanner(w.documents.d2)).toMatchObject({
			status: "assigned",
			machineId: w.machines.a2.machineId,
			rule: "pin",
		});
		expect(await machines.requestPlanner(w.documents.d1)).toMatchObject({
			status: "offline",
			machineId: w.machines.a1.machineId,
			login: "ana",
			rule: "override",
		});
	});

	test("another person's machine is never eligible", async () => {
		const w = await world();
		const { machines } = w.server.context;
		await online(w, "c1");
		// ana has no machine online; cy's is online, and is not ana's to use.
		expect(await machines.requestPlanner(w.documents.d1)).toEqual({ status: "none", reason: "no-machine" });
		const res = await pageRequest(w.target, w.ana, "PUT", `/api/documents/${w.documents.d1}/machine`, {
			machine: w.machines.c1.machineId,
		});
		expect(res.status).toBe(404);
		expect(await res.json()).toMatchObject({ code: "machine-not-found" });
		// Used by cy, the document goes to cy's machine.
		expect(await machines.requestPlanner(w.documents.d1, { by: "cy" })).toMatchObject({
			status: "assigned",
			machineId: w.machines.c1.machineId,
			login: "cy",
		});
		// ben can read octo/score but not push: he may not choose for it.
		const { jar: ben } = await signInLocally(w.target, "ben");
		const forbidden = await pageRequest(w.target, ben, "PUT", "/api/repositories/octo/score/machine", {
			machine: null,
		});
		expect(forbidden.status).toBe(403);
	});

	test("a document unused for 30 minutes is withdrawn, unless it is busy", async () => {
		// Long enough liveness that the half hours below do not drop the machine: it answers pings in between.
		const hour = String(3_600_000);
		const w = await world("sqlite", {
			AGENT_CONNECTION_TIMEOUT_MS: hour,
			AGENT_CONNECTION_MAX_SILENCE_MS: hour,
		});
		const { machines } = w.server.context;
		const a1 = await online(w, "a1");
		await machines.requestPlanner(w.documents.d1);
		expect(await plannersOf(w, a1)).toEqual([w.documents.d1]);
		await machines.requestPlanner(w.documents.d2);
		expect((await plannersOf(w, a1)).sort()).toEqual([w.documents.d1, w.documents.d2].sort());
		machines.addBusyCheck((id) => id === w.documents.d2);
		await w.clock.advance(UNUSED_AFTER_MS - 60_000);
		await a1.roundTrip();
		machines.markUsed(w.documents.d1);
		await w.clock.advance(60_000);
		await a1.roundTrip();
		await machines.settled();
		await machines.sweep();
		expect(w.withdrawn).toEqual([]);
		await w.clock.advance(UNUSED_AFTER_MS);
		await a1.roundTrip();
		await machines.settled();
		await machines.sweep();
		expect(w.withdrawn).toEqual([
			{ documentId: w.documents.d1, machineId: w.machines.a1.machineId, reason: "unused" },
		]);
		expect(await plannersOf(w, a1)).toEqual([w.documents.d2]);
	});
});

for (const kind of runnableKinds()) {
	test(`assignments are stored: after a restart the machine's welcome carries them [${kind}]`, async () => {
		const w = await world(kind);
		await online(w, "a1");
		await w.server.context.machines.requestPlanner(w.documents.d1);
		await w.server.context.machines.requestPlanner(w.documents.d2);
		await w.server.restart();
		const { client, welcome } = await helloMachine(w.server.url, w.machines.a1.credential);
		sockets.push(client);
		expect(welcome.planners.map((p) => p.document.id).sort()).toEqual(
			[w.documents.d1, w.documents.d2].sort(),
		);
	});
}

test("archiving a document withdraws it from its machine", async () => {
	const w = await world();
	const { machines } = w.server.context;
	const a1 = await online(w, "a1");
	await machines.requestPlanner(w.documents.d1);
	expect(await plannersOf(w, a1)).toEqual([w.documents.d1]);
	await w.server.context.domain.documents.archive(w.documents.d1);
	expect(await plannersOf(w, a1)).toEqual([]);
	expect(w.withdrawn).toEqual([
		{ documentId: w.documents.d1, machineId: w.machines.a1.machineId, reason: "archived" },
	]);
	expect(await machines.requestPlanner(w.documents.d1)).toEqual({ status: "none", reason: "no-document" });
});

async function waitOffline(w: World, machineId: string): Promise<void> {
	if (!w.server.context.machines.control.isOnline(machineId)) return;
	await new Promise<void>((resolve) => {
		const off = w.server.context.machines.onChange((id) => {
			if (id !== machineId || w.server.context.machines.control.isOnline(machineId)) return;
			off();
			resolve();
		});
	});
}

test("what a machine says of a document's Planner backend is kept for the agent endpoint's messages", async () => {
	const w = await world();
	const { machines } = w.server.context;
	const a1 = await online(w, "a1");
	await machines.requestPlanner(w.documents.d1);
	const changes = () =>
		new Promise<void>((resolve) => {
			const off = machines.onChange(() => {
				off();
				resolve();
			});
		});
	for (const event of ["starting", "exited", "exited"] as const) {
		const changed = changes();
		a1.send({
			type: "planner-event",
			document: w.documents.d1,
			event,
			reason: "command not found: my-planner",
		});
		await changed;
	}
	expect(machines.plannerActivity(w.documents.d1)).toEqual({
		machineId: w.machines.a1.machineId,
		login: "ana",
		event: "exited",
		reason: "command not found: my-planner",
		at: w.clock.now(),
		exitsInRow: 2,
	});
	machines.plannerAttached(w.documents.d1);
	expect(machines.plannerActivity(w.documents.d1)?.exitsInRow).toBe(0);
});
