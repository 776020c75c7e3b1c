// Paired machines on the agent endpoint, over real sockets: a chopin_p_ credential attaches its document without a
// browser sign-in (also after a restart), the same machine's stale link never blocks its reattach, revocation and
// withdrawal end the link (access-revoked, 4403), and an @chopin message waits for the machine to start a Planner.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { wording } from "./agent/wording";
import { runnableKinds } from "./store/testing";
import { type AgentSocket, connectAgentSocket, openAgentSocket } from "./testing/agent-socket";
import {
	hello,
	issuePlannerToken,
	LOCAL_ENV,
	type MachineClient,
	openMachineSocket,
	pageRequest,
	pairedLocally,
	pairLocally,
	type Target,
} from "./testing/machines";
import { startTestServer, type TestServer } from "./testing/server";
import type { CookieJar } from "./testing/sign-in";

let clock: ManualClock;
const servers: TestServer[] = [];
const closers: (() => void)[] = [];

beforeEach(() => {
	clock = new ManualClock();
});

afterEach(async () => {
	for (const close of closers.splice(0)) close();
	for (const server of servers.splice(0)) await server.close();
});

interface Setup {
	server: TestServer;
	target: Target;
	jar: CookieJar;
	credential: string;
	machineId: string;
	documentId: string;
}

async function setup(
	kind: "sqlite" | "postgres" = "sqlite",
	env: Record<string, string> = {},
	options: { realClock?: boolean } = {},
): Promise<Setup> {
	const server = await startTestServer({
		...(!options.realClock && { clock }),
		store: kind,
		env: { ...LOCAL_ENV, LOCAL_PLANNER_CREDENTIALS: "on", ...env },
	});
	servers.push(server);
	const { target, jar, ...paired } = await pairedLocally(server);
	const document = await server.context.domain.documents.create({
		repository: "octo/score",
		title: "Plan",
		createdBy: "ana",
	});
	return { server, target, jar, ...paired, documentId: document.id };
}

function plannerToken(s: Setup, documentId = s.documentId): Promise<string> {
	return issuePlannerToken(s.target, s.credential, documentId);
}

async function attach(s: Setup, token: string, documentId = s.documentId, features?: string) {
	const socket = await connectAgentSocket({
		url: s.server.url,
		token,
		...(features !== undefined && { features }),
	});
	closers.push(() => socket.terminate());
	socket.send({ type: "attach", version: 1, document: documentId });
	return socket;
}

async function machineOnline(s: Setup): Promise<MachineClient> {
	const client = await openMachineSocket(s.server.url, { credential: s.credential });
	if (!("ws" in client)) throw new Error(`control channel refused: ${client.status}`);
	closers.push(() => client.close());
	client.send(hello());
	expect((await client.next()).type).toBe("welcome");
	return client;
}

for (const kind of runnableKinds()) {
	describe(`a machine's Planner credential on /api/v1/agent [${kind}]`, () => {
		test("attaches its document as the owner with no browser sign-in, also after a server restart", async () => {
			const s = await setup(kind);
			// Nobody is signed in in a browser since the restart, and none is needed.
			await s.server.restart();
			const socket = await attach(s, await plannerToken(s));
			const attached = await socket.expect("attached");
			expect(attached.document.id).toBe(s.documentId);
			expect(s.server.context.planner.status(s.documentId)).toEqual({ state: "attached", login: "ana" });
		});
	});
}

describe("a machine's Planner credential", () => {
	test("attaches only the document it was issued for", async () => {
		const s = await setup();
		const other = await s.server.context.domain.documents.create({
			repository: "octo/score",
			title: "Other",
			createdBy: "ana",
		});
		const socket = await attach(s, await plannerToken(s), other.id);
		expect(await socket.expect("refused")).toMatchObject({
			code: "repository-forbidden",
			message: wording.machineForbidden(),
		});
		expect((await socket.closed).code).toBe(4403);
	});

	test("unknown, or its machine revoked: 401 at the upgrade", async () => {
		const s = await setup();
		const token = await plannerToken(s);
		const unknown = await openAgentSocket({ url: s.server.url, token: `chopin_p_${"A".repeat(43)}` });
		expect(unknown.status).toBe(401);
		await s.server.context.machines.revoke(s.machineId);
		const revoked = await openAgentSocket({ url: s.server.url, token });
		expect(revoked.status).toBe(401);
		expect(revoked.body).not.toContain(token);
	});

	test("the same machine's stale link never blocks its reattach: the new link replaces it at once", async () => {
		const s = await setup();
		const stale = await attach(s, await plannerToken(s));
		await stale.expect("attached");
		// The old link stops reading, as a backend on a machine that slept would.
		stale.pause();
		const fresh = await attach(s, await plannerToken(s));
		expect((await fresh.expect("attached")).document.id).toBe(s.documentId);
		stale.resume();
		expect(await stale.expect("refused")).toMatchObject({
			code: "planner-attached",
			message: wording.replacedBySameMachine("ana"),
		});
		expect((await stale.closed).code).toBe(4409);
		expect(s.server.context.planner.status(s.documentId)).toEqual({ state: "attached", login: "ana" });
	});

	test("with resumable-sessions, the replaced stale link's work is kept for the new link's resume", async () => {
		const s = await setup();
		const stale = await attach(s, await plannerToken(s), s.documentId, "resumable-sessions");
		await stale.expect("attached");
		const start = await askedQ1(s, stale);
		const decisions = s.server.context.domain.decisions;
		stale.pause();
		const fresh = await attach(s, await plannerToken(s), s.documentId, "resumable-sessions");
		await fresh.expect("attached");
		fresh.send({ type: "resume", sessions: [{ session: start.session, requests: ["q1"] }] });
		expect(await fresh.expect("resumed")).toEqual({
			type: "resumed",
			sessions: [{ session: start.session, requests: ["q1"] }],
		});
		expect((await decisions.findByRequest(s.documentId, "q1"))?.status).toBe("open");
		stale.resume();
		expect(await stale.nextOf("refused")).toMatchObject({ code: "planner-attached" });
	});

	test("another machine of the same person does not replace it", async () => {
		const s = await setup();
		const first = await attach(s, await plannerToken(s));
		await first.expect("attached");
		const second = await pairLocally(s.target, s.jar, { label: "ana's desktop" });
		const other = await attach({ ...s, ...second }, await plannerToken({ ...s, ...second }));
		expect(await other.expect("refused")).toMatchObject({ code: "planner-attached" });
		expect((await other.closed).code).toBe(4409);
	});

	test("Disconnect machine ends its attached link: access-revoked (4403), saying the machine was disconnected", async () => {
		const s = await setup();
		const socket = await attach(s, await plannerToken(s));
		await socket.expect("attached");
		const res = await pageRequest(s.target, s.jar, "DELETE", `/api/machines/${s.machineId}`);
		expect(res.status).toBeLessThan(300);
		expect(await socket.expect("refused")).toMatchObject({
			code: "access-revoked",
			message: wording.machineRevoked("ana"),
		});
		expect((await socket.closed).code).toBe(4403);
		expect(s.server.context.planner.status(s.documentId)).toEqual({ state: "unattached" });
	});

	test("a document withdrawn from the machine (unused for 30 minutes) ends its link: access-revoked (4403)", async () => {
		// Only the withdrawal ends the link.
		const s = await assignedPastTheUnusedPeriod();
		const socket = await attach(s, await plannerToken(s));
		await socket.expect("attached");
		clock.advance(31 * 60_000);
		await s.server.context.machines.sweep();
		expect(await socket.expect("refused")).toMatchObject({
			code: "access-revoked",
			message: wording.machineWithdrawn("ana", "unused"),
		});
		expect((await socket.closed).code).toBe(4403);
	});
});

/** The machine online and asked to run the document's Planner, with pings and silence limits past its 30 unused minutes. */
async function assignedPastTheUnusedPeriod(): Promise<Setup> {
	const s = await setup("sqlite", {
		AGENT_CONNECTION_TIMEOUT_MS: "3600000",
		AGENT_CONNECTION_MAX_SILENCE_MS: "3600000",
	});
	await machineOnline(s);
	expect((await s.server.context.machines.requestPlanner(s.documentId, { by: "ana" })).status).toBe(
		"assigned",
	);
	return s;
}

/** ana's @chopin message: the link's turn asks q1 and ends; resolves with its start once the Decision exists. */
async function askedQ1(s: Setup, socket: AgentSocket) {
	const asked = s.server.context.planner.handleMessage({
		documentId: s.documentId,
		author: "ana",
		body: "@chopin ask",
	});
	const start = await socket.expect("start");
	socket.send({ type: "started", session: start.session });
	const turn = await socket.expect("turn");
	await asked;
	const input = { method: "confirm", title: "Ship it?", message: "" };
	socket.send({ type: "input-request", request: "q1", session: start.session, input });
	socket.send({ type: "turn-end", session: start.session, turn: turn.turn, status: "finished" });
	const decisions = s.server.context.domain.decisions;
	for (let i = 0; i < 2000 && !(await decisions.findByRequest(s.documentId, "q1")); i++) await Bun.sleep(5);
	return start;
}

/** A resumable link of the machine's Planner asked q1 in a turn, then dropped: the Planner is disconnected. */
async function disconnectedOn(s: Setup) {
	const planner = s.server.context.planner;
	const decisions = s.server.context.domain.decisions;
	const socket = await attach(s, await plannerToken(s), s.documentId, "resumable-sessions");
	await socket.expect("attached");
	const start = await askedQ1(s, socket);
	socket.terminate();
	for (let i = 0; i < 2000 && planner.status(s.documentId).state !== "disconnected"; i++) await Bun.sleep(5);
	expect(planner.status(s.documentId)).toEqual({ state: "disconnected", login: "ana" });
	const withdrawn = async () => {
		for (let i = 0; i < 2000; i++) {
			if ((await decisions.findByRequest(s.documentId, "q1"))?.settledReason === "withdrawn") return true;
			await Bun.sleep(5);
		}
		return false;
	};
	return { session: start.session, withdrawn };
}

describe("a machine's disconnected Planner (spec: Resuming after a dropped link)", () => {
	test("revoking the machine ends it for good: the question is withdrawn and nothing resumes", async () => {
		const s = await setup();
		const { withdrawn } = await disconnectedOn(s);
		const res = await pageRequest(s.target, s.jar, "DELETE", `/api/machines/${s.machineId}`);
		expect(res.status).toBeLessThan(300);
		expect(await withdrawn()).toBe(true);
		expect(s.server.context.planner.status(s.documentId)).toEqual({ state: "unattached" });
	});

	test("the owner choosing another machine for the document ends it for good", async () => {
		const s = await setup();
		await machineOnline(s);
		expect((await s.server.context.machines.requestPlanner(s.documentId, { by: "ana" })).status).toBe(
			"assigned",
		);
		const { session, withdrawn } = await disconnectedOn(s);
		const desktop = await pairLocally(s.target, s.jar, { label: "ana's desktop" });
		await s.server.context.machines.usage.setOverride("ana", s.documentId, desktop.machineId);
		expect(await withdrawn()).toBe(true);
		expect(s.server.context.planner.status(s.documentId)).toEqual({ state: "unattached" });
		// The first machine's credential for the document resumes nothing.
		const back = await attach(s, await plannerToken(s), s.documentId, "resumable-sessions");
		await back.expect("attached");
		back.send({ type: "resume", sessions: [{ session, requests: ["q1"] }] });
		expect(await back.expect("resumed")).toEqual({ type: "resumed", sessions: [] });
	});

	test("the owner's browser bearer attaching over it ends it for good: that client does not resume it", async () => {
		const accounts = JSON.parse(LOCAL_ENV.LOCAL_ACCOUNTS!);
		accounts.users[0].token = "ana-browser-bearer-0123456789";
		const s = await setup("sqlite", { LOCAL_ACCOUNTS: JSON.stringify(accounts) });
		// Without the feature: ended at its attach.
		const { withdrawn } = await disconnectedOn(s);
		const browser = await attach(s, "ana-browser-bearer-0123456789");
		await browser.expect("attached");
		expect(await withdrawn()).toBe(true);
		expect(s.server.context.planner.status(s.documentId)).toEqual({ state: "attached", login: "ana" });
	});

	test("the machine's unused period ends nothing: past 30 minutes the document stays with it, and it resumes", async () => {
		const s = await assignedPastTheUnusedPeriod();
		const { session } = await disconnectedOn(s);
		const logged = s.server.logs.length;
		clock.advance(31 * 60_000);
		await s.server.context.machines.sweep();
		expect(s.server.logs.slice(logged).filter((line) => line.msg === "planner withdrawn")).toEqual([]);
		expect(s.server.context.planner.status(s.documentId)).toEqual({ state: "disconnected", login: "ana" });
		const back = await attach(s, await plannerToken(s), s.documentId, "resumable-sessions");
		await back.expect("attached");
		back.send({ type: "resume", sessions: [{ session, requests: ["q1"] }] });
		expect(await back.expect("resumed")).toEqual({
			type: "resumed",
			sessions: [{ session, requests: ["q1"] }],
		});
	});
});

describe("an @chopin message with no attached Planner", () => {
	const send = (s: Setup, body: string) =>
		pageRequest(s.target, s.jar, "POST", `/api/documents/${s.documentId}/messages`, { body });

	test("no machine: 'Connect a machine… machine button…'", async () => {
		const s = await setup();
		await s.server.context.machines.revoke(s.machineId);
		const res = await send(s, "@chopin hello");
		expect(res.status).toBe(409);
		expect(await res.json()).toMatchObject({
			code: "planner-not-attached",
			message: wording.connectMachine(),
		});
	});

	test("the machine pinned to the repository is offline: '@ana's machine is offline…'", async () => {
		const s = await setup();
		await s.server.context.machines.usage.setPin("ana", "octo/score", s.machineId);
		const res = await send(s, "@chopin hello");
		expect(res.status).toBe(409);
		expect(await res.json()).toMatchObject({ message: wording.machineOffline("ana") });
	});

	test("the machine is asked to start it, and the message becomes a turn once its backend attaches", async () => {
		const s = await setup();
		const machine = await machineOnline(s);
		const sent = send(s, "@chopin hello");
		const planners = await machine.next();
		expect(planners).toMatchObject({ type: "planners", planners: [{ document: { id: s.documentId } }] });
		const socket = await attach(s, await plannerToken(s));
		await socket.expect("attached");
		const start = await socket.nextOf("start");
		expect(start).toMatchObject({ type: "start" });
		// The sender is answered once the message is on disk, which waits for its turn to leave (or 20 ms).
		socket.send({ type: "started", session: start.session });
		expect(await socket.nextOf("turn")).toMatchObject({ type: "turn" });
		expect((await sent).status).toBe(201);
	});

	test("not attached within the wait: 'Still connecting…'; a backend exiting again and again: 'Can't connect…: why'", async () => {
		const s = await setup("sqlite", { PLANNER_CONNECT_WAIT_MS: "1000" });
		const machine = await machineOnline(s);
		const sent = send(s, "@chopin hello");
		await machine.next();
		clock.advance(1_000);
		const res = await sent;
		expect(res.status).toBe(409);
		expect(await res.json()).toMatchObject({
			code: "planner-not-attached",
			message: wording.stillConnecting("ana"),
		});
		for (let i = 0; i < 2; i++) {
			machine.send({
				type: "planner-event",
				document: s.documentId,
				event: "exited",
				reason: "the Planner command exited with status 127",
			});
		}
		await machine.roundTrip();
		const again = await send(s, "@chopin hello");
		expect(await again.json()).toMatchObject({
			message: wording.cantConnect("ana", "the Planner command exited with status 127"),
		});
	});

	test("on the real clock, a wait past Bun's 10-second HTTP idle timeout still answers the request", async () => {
		// Bun's idle timer is not on the injected clock, so this one runs in real time: 11 s, past its
		// default of 10, which does not close a connection whose request is still being answered.
		const s = await setup("sqlite", { PLANNER_CONNECT_WAIT_MS: "11000" }, { realClock: true });
		await machineOnline(s);
		const res = await send(s, "@chopin hello");
		expect(res.status).toBe(409);
		expect(await res.json()).toMatchObject({ message: wording.stillConnecting("ana") });
	}, 30_000);
});
