import { afterEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { MACHINE_SUBPROTOCOL } from "@chopin/agent-link/machine";
import type { Env } from "../config";
import { runnableKinds } from "../store/testing";
import {
	cliRequest,
	connectMachine,
	hello,
	helloMachine,
	LOCAL_ENV,
	openMachineSocket,
	pageRequest,
	pairLocally,
	type RefusedUpgrade,
	TEST_CLIENT,
} from "../testing/machines";
import { startTestServer, type TestServer } from "../testing/server";
import { signInLocally } from "../testing/sign-in";

const open: TestServer[] = [];
const sockets: { close(): void }[] = [];
afterEach(async () => {
	for (const s of sockets.splice(0)) s.close();
	for (const s of open.splice(0)) await s.close();
});

async function setup(env: Env = {}, store: "sqlite" | "postgres" = "sqlite") {
	const clock = new ManualClock();
	const server = await startTestServer({ clock, store, env: { ...LOCAL_ENV, ...env } });
	open.push(server);
	const target = {
		fetch: (req: Request) => server.fetch(req),
		get publicUrl() {
			return server.context.config.publicUrl;
		},
	};
	const { jar } = await signInLocally(target, "ana");
	const paired = await pairLocally(target, jar);
	return { clock, server, target, jar, ...paired };
}

/** Resolves the next time the machine's state changes (a report stored, online, offline, revoked). */
function nextChange(server: TestServer, machineId: string): Promise<void> {
	return new Promise((resolve) => {
		const off = server.context.machines.onChange((id) => {
			if (id !== machineId) return;
			off();
			resolve();
		});
	});
}

function track<T extends { close(): void }>(client: T): T {
	sockets.push(client);
	return client;
}

describe("the control channel's upgrade", () => {
	test("refusals carry their status and JSON body, in the documented order", async () => {
		const { server, target, credential } = await setup({ MIN_CLI_VERSION: "0.2.0" });
		const noProtocol = await openMachineSocket(server.url, { credential, protocols: ["chopin.agent.v1"] });
		expect(noProtocol).toMatchObject({
			status: 426,
			body: { code: "subprotocol-required", supported: [MACHINE_SUBPROTOCOL] },
		});
		expect(await openMachineSocket(server.url, {})).toMatchObject({
			status: 401,
			body: { code: "machine-revoked" },
		});
		const bogus = `chopin_m_${"A".repeat(43)}`;
		expect(await openMachineSocket(server.url, { credential: bogus })).toMatchObject({
			status: 401,
			body: { code: "machine-revoked" },
		});
		expect(await openMachineSocket(server.url, { credential, origin: "https://evil.example" })).toMatchObject(
			{
				status: 403,
				body: { code: "origin-forbidden" },
			},
		);
		expect(await openMachineSocket(server.url, { credential, client: null })).toMatchObject({
			status: 400,
			body: { code: "client-header-invalid" },
		});
		const old = await openMachineSocket(server.url, {
			credential,
			client: { ...TEST_CLIENT, version: "0.1.0", install: "script", os: "darwin" },
		});
		expect(old).toMatchObject({ status: 426, body: { code: "client-version-refused" } });
		const message = String((old as RefusedUpgrade).body.message);
		expect(message).toContain("0.2.0");
		expect(message).toContain(`curl -fsSL ${server.context.config.publicUrl}/install.sh`);
		// A write to the machines table outside the service goes through the credential cache's change(), as the service's own do.
		await server.context.machines.credentialCache.change(
			{},
			async () => await server.context.store.sql`UPDATE machines SET reauthorize = 1`,
		);
		expect(await openMachineSocket(server.url, { credential })).toMatchObject({
			status: 401,
			body: { code: "machine-reauthorize" },
		});
		// The same refusals on the machine's HTTP API.
		const http = await cliRequest(target, "GET", "/api/connector/machine", { credential });
		expect(http.status).toBe(401);
		expect(await http.json()).toMatchObject({ code: "machine-reauthorize" });
	});

	test("a disconnected machine's ping is 204 and costs nothing; a server welcoming too many machines sheds with 503 and Retry-After", async () => {
		const { server, target, credential } = await setup();
		const ping = await cliRequest(target, "GET", "/api/connector/ping", { client: null });
		expect(ping.status).toBe(204);
		expect(ping.headers.get("cache-control")).toBe("no-store");

		const {
			server: busy,
			target: busyTarget,
			credential: busyCredential,
		} = await setup({
			MACHINE_HELLOS_IN_FLIGHT: "0",
		});
		const shed = await cliRequest(busyTarget, "GET", "/api/connector/ping", { client: null });
		expect(shed.status).toBe(503);
		const seconds = Number(shed.headers.get("retry-after"));
		expect(seconds >= 1 && seconds <= 3).toBe(true);
		expect(await shed.json()).toMatchObject({ code: "server-busy", retryAfter: seconds });
		expect(await openMachineSocket(busy.url, { credential: busyCredential })).toMatchObject({
			status: 503,
			body: { code: "server-busy" },
		});
		const welcomed = await openMachineSocket(server.url, { credential });
		expect("status" in welcomed).toBe(false);
		if ("close" in welcomed) welcomed.close();
	});

	test("404 for every request when AGENT is off", async () => {
		const { server, credential } = await setup({ AGENT: "off" });
		expect(await openMachineSocket(server.url, { credential })).toMatchObject({
			status: 404,
			body: { code: "not-found" },
		});
		expect((await fetch(`${server.url}/api/v1/machine`)).status).toBe(404);
	});
});

describe("the control channel", () => {
	test("hello first, then a welcome with the machine, each repository's access and the Planner set", async () => {
		const { server, credential, machineId } = await setup();
		const client = track(await connectMachine(server.url, credential));
		expect(client.ws.protocol).toBe(MACHINE_SUBPROTOCOL);
		client.send(hello(["octo/score", "octo/other", "octo/private"]));
		expect(await client.next()).toEqual({
			type: "welcome",
			machine: { id: machineId, label: "ana's laptop", owner: "ana", autoRun: false },
			repositories: [
				{ repository: "octo/score", access: "ok" },
				{ repository: "octo/other", access: "ok" },
				{ repository: "octo/private", access: "forbidden" },
			],
			planners: [],
		});
		expect(server.context.machines.control.isOnline(machineId)).toBe(true);
	});

	test("anything before hello is a protocol error: error, then 1008", async () => {
		const { server, credential } = await setup();
		const client = track(await connectMachine(server.url, credential));
		client.send({ type: "report", checkouts: [], runs: [], planners: [], sandbox: { kind: "none" } });
		expect(await client.next()).toMatchObject({ type: "error", code: "malformed-message" });
		expect((await client.closed).code).toBe(1008);
	});

	test("binary and oversized frames are refused with their codes", async () => {
		const { server, credential } = await setup();
		const a = track(await connectMachine(server.url, credential));
		a.ws.send(new Uint8Array([1, 2, 3]));
		expect(await a.next()).toMatchObject({ type: "error", code: "malformed-message" });
		expect((await a.closed).code).toBe(1008);
		const b = track(await connectMachine(server.url, credential));
		b.send(`"${"x".repeat(300 * 1024)}"`);
		expect(await b.next()).toMatchObject({ type: "error", code: "message-too-large" });
		expect((await b.closed).code).toBe(1009);
	});

	test("a report replaces the stored state and counts as contact", async () => {
		const { server, target, jar, clock, credential, machineId } = await setup();
		const { client } = await helloMachine(server.url, credential);
		track(client);
		await clock.advance(60_000);
		const changed = nextChange(server, machineId);
		client.send({
			type: "report",
			checkouts: [{ path: "/home/ana/src/0", repository: "octo/score", branch: "main" }],
			runs: [{ id: "r1", status: "running", worktree: "/home/ana/.chopin/runs/r1" }],
			planners: [
				{
					document: "d1",
					state: "running",
					worktree: "/home/ana/.chopin/planners/octo/score/d1",
					checkout: "/home/ana/src/0",
					since: clock.now(),
					restarts: 0,
					sandbox: "bwrap",
				},
			],
			sandbox: { kind: "bwrap" },
		});
		await changed;
		const row = await server.context.store.one(
			server.context.store
				.sql`SELECT checkouts, runs, planners, last_contact_at FROM machines WHERE id = ${machineId}`,
		);
		expect(JSON.parse(String(row!.checkouts))[0].branch).toBe("main");
		expect(JSON.parse(String(row!.runs))[0].id).toBe("r1");
		expect(JSON.parse(String(row!.planners))[0].worktree).toBe("/home/ana/.chopin/planners/octo/score/d1");
		expect(row!.last_contact_at).toBe(clock.now());
		const listed = await pageRequest(target, jar, "GET", "/api/machines");
		const { machines } = (await listed.json()) as { machines: { online: boolean; runs: unknown[] }[] };
		expect(machines[0]).toMatchObject({ online: true, runs: [{ id: "r1", displayStatus: "running" }] });
	});

	test("pings every AGENT_CONNECTION_PING_MS; a machine that answers stays, one that does not is closed 1001", async () => {
		const { server, clock, credential, machineId } = await setup({
			AGENT_CONNECTION_PING_MS: "15000",
			AGENT_CONNECTION_TIMEOUT_MS: "45000",
		});
		const { client } = await helloMachine(server.url, credential);
		track(client);
		// Six pings over twice the timeout, and nothing but pongs from the machine.
		for (let i = 1; i <= 6; i++) {
			const pinged = client.pings.next();
			await clock.advance(15_000);
			await pinged;
			await client.roundTrip();
		}
		expect(client.pings.count).toBe(6);
		expect(server.context.machines.control.isOnline(machineId)).toBe(true);

		const silent = track(await connectMachine(server.url, credential, { autoPong: false }));
		silent.send(hello());
		expect((await silent.next()).type).toBe("welcome");
		expect((await client.closed).code).toBe(4409);
		await clock.advance(45_000);
		expect(await silent.closed).toEqual({ code: 1001, reason: "unresponsive" });
		expect(silent.pings.count).toBeGreaterThan(0);
		await server.context.machines.settled();
		expect(server.context.machines.control.isOnline(machineId)).toBe(false);
	});

	test("a new connection with the same credential replaces the old one at its hello (4409), and works immediately", async () => {
		const { server, credential, machineId } = await setup();
		const first = await helloMachine(server.url, credential);
		track(first.client);
		const second = track(await connectMachine(server.url, credential));
		second.send(hello());
		expect(await first.client.closed).toEqual({ code: 4409, reason: "replaced" });
		expect((await second.next()).type).toBe("welcome");
		expect(server.context.machines.control.isOnline(machineId)).toBe(true);
	});

	test("an upgrade that never says hello replaces nothing: an attempt the machine gave up, upgraded late in a storm, does not end its live connection (issue 19)", async () => {
		const { server, credential, machineId } = await setup();
		const live = await helloMachine(server.url, credential);
		track(live.client);
		// What the server upgrades after the machine's next attempt was welcomed: a socket nobody will speak on.
		const late = track(await connectMachine(server.url, credential));
		// Frames arrive in order: once the pong is back the server has handled the late upgrade's open.
		await late.roundTrip();
		await live.client.roundTrip();
		// Before the fix the late upgrade closed the live connection with 4409, and the CLI stops for good on 4409.
		expect(server.context.machines.control.isOnline(machineId)).toBe(true);
		// Nor does its close take the machine offline.
		late.close();
		await late.closed;
		await live.client.roundTrip();
		expect(server.context.machines.control.isOnline(machineId)).toBe(true);
		expect(live.client.queued).toEqual([]);
		// On restart the late socket hears `restarting` as the live one does.
		const another = track(await connectMachine(server.url, credential));
		await another.roundTrip();
		server.context.machines.control.stop(10_000);
		expect(await another.closed).toMatchObject({ code: 1012 });
		expect(await live.client.closed).toMatchObject({ code: 1012 });
	});

	test("revoked while connected: `revoked`, then 4410; every call with the credential then gets machine-revoked", async () => {
		const { server, target, jar, credential, machineId } = await setup();
		const { client } = await helloMachine(server.url, credential);
		track(client);
		const heard: string[] = [];
		server.context.machines.onRevoked((id, reason) => heard.push(`${id}:${reason}`));
		const res = await pageRequest(target, jar, "DELETE", `/api/machines/${machineId}`);
		expect(res.status).toBe(204);
		expect(await client.next()).toMatchObject({ type: "revoked", code: "machine-revoked" });
		expect(await client.closed).toEqual({ code: 4410, reason: "machine-revoked" });
		expect(heard).toEqual([`${machineId}:revoked`]);
		for (const [method, path] of [
			["GET", "/api/connector/machine"],
			["GET", "/api/connector/github-token"],
			["DELETE", "/api/connector/machine"],
		] as const) {
			const refused = await cliRequest(target, method, path, { credential });
			expect(refused.status).toBe(401);
			expect(await refused.json()).toMatchObject({ code: "machine-revoked" });
		}
		expect(await openMachineSocket(server.url, { credential })).toMatchObject({ status: 401 });
		// Revoking again is the same answer.
		expect((await pageRequest(target, jar, "DELETE", `/api/machines/${machineId}`)).status).toBe(204);
		// Someone else's machine, or none: not found.
		const { jar: cy } = await signInLocally(target, "cy");
		const { machineId: other } = await pairLocally(target, cy);
		expect((await pageRequest(target, jar, "DELETE", `/api/machines/${other}`)).status).toBe(404);
	});

	test("chopin disconnect: DELETE /api/connector/machine revokes the machine and closes its channel", async () => {
		const { server, target, credential } = await setup();
		const { client } = await helloMachine(server.url, credential);
		track(client);
		expect((await cliRequest(target, "DELETE", "/api/connector/machine", { credential })).status).toBe(204);
		expect(await client.next()).toMatchObject({ type: "revoked", code: "machine-revoked" });
		expect((await client.closed).code).toBe(4410);
	});

	test("no checkout's repository accessible: revoked repository-access-lost, 4403", async () => {
		const { server, credential } = await setup();
		const client = track(await connectMachine(server.url, credential));
		client.send(hello(["octo/private"]));
		const revoked = await client.next();
		expect(revoked).toMatchObject({ type: "revoked", code: "repository-access-lost" });
		expect((await client.closed).code).toBe(4403);
	});

	for (const kind of runnableKinds()) {
		test(`at server stop every machine hears restarting, then 1012, and reconnects at once [${kind}]`, async () => {
			const { server, credential, machineId } = await setup({}, kind);
			const { client } = await helloMachine(server.url, credential);
			track(client);
			const restarting = server.restart();
			expect(await client.next()).toEqual({ type: "restarting", reconnectWithinMs: 10_000 });
			expect(await client.closed).toEqual({ code: 1012, reason: "restarting" });
			await restarting;
			const again = await helloMachine(server.url, credential);
			track(again.client);
			expect(again.welcome.machine.id).toBe(machineId);
		});
	}
});
