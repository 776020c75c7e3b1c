import { afterEach, beforeEach, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { describeStores, type StoreFixture } from "../store/testing";
import { helloMachine, type MachineClient, pageRequest, pairLocally } from "../testing/machines";
import { signInLocally } from "../testing/sign-in";
import { type StoreServer, startStoreServer } from "../testing/store-server";
import { machinesPageSchema } from "./page-data";

/** ana writes octo/score; only cy can read octo/secret. */
const ENV = {
	AUTH_MODE: "local",
	DEMO: "off",
	LOCAL_ACCOUNTS: JSON.stringify({
		users: [{ login: "ana" }, { login: "cy" }],
		repositories: { "octo/score": { ana: "admin", cy: "write" }, "octo/secret": { cy: "admin" } },
	}),
};

let clock: ManualClock;
let servers: StoreServer[];
let sockets: MachineClient[];
beforeEach(() => {
	clock = new ManualClock();
	servers = [];
	sockets = [];
});
afterEach(async () => {
	for (const s of sockets.splice(0)) s.close();
	for (const s of servers.splice(0)) await s.stop();
});

async function serve(t: StoreFixture): Promise<StoreServer> {
	const server = await startStoreServer({ store: t.store, clock, env: ENV });
	servers.push(server);
	return server;
}

describeStores("what the Machines page reads", (t) => {
	test("GET /api/machines: the machines, the person's pins, and titles of the documents they can read", async () => {
		const server = await serve(t);
		const { jar } = await signInLocally(server, "ana");
		const { credential, machineId } = await pairLocally(server, jar, { label: "ana's laptop" });
		const docs = server.context.domain.documents;
		const plan = await docs.create({ repository: "octo/score", title: "The plan", createdBy: "ana" });
		const secret = await docs.create({ repository: "octo/secret", title: "Hidden", createdBy: "cy" });
		const { client } = await helloMachine(server.url, credential, ["octo/score"], {});
		sockets.push(client);
		const reported = new Promise<void>((resolve) => {
			const off = server.context.machines.onChange(() => {
				off();
				resolve();
			});
		});
		client.send({
			type: "report",
			checkouts: [{ path: "/home/ana/src/0", repository: "octo/score" }],
			runs: [
				{ id: "r1", status: "running", worktree: "/w/r1", document: plan.id },
				{ id: "r2", status: "paused", worktree: "/w/r2", document: secret.id },
			],
			planners: [],
			sandbox: { kind: "bwrap" },
		});
		await reported;

		const pinned = await pageRequest(server, jar, "PUT", "/api/repositories/Octo/Score/machine", {
			machine: machineId,
		});
		expect(pinned.status).toBe(200);
		const page = machinesPageSchema.parse(
			await (await pageRequest(server, jar, "GET", "/api/machines")).json(),
		);
		expect(page.machines.map((m) => [m.id, m.online, m.runs.map((r) => r.id)])).toEqual([
			[machineId, true, ["r1", "r2"]],
		]);
		expect(page.pins).toEqual([{ repository: "octo/score", machine: machineId }]);
		// ana cannot read octo/secret: that run stays an id.
		expect(page.documents).toEqual({ [plan.id]: { title: "The plan", repository: "octo/score" } });

		expect(
			(await pageRequest(server, jar, "PUT", "/api/repositories/octo/score/machine", { machine: null }))
				.status,
		).toBe(200);
		const after = machinesPageSchema.parse(
			await (await pageRequest(server, jar, "GET", "/api/machines")).json(),
		);
		expect(after.pins).toEqual([]);
	});

	test("another person's page lists none of ana's machines or pins", async () => {
		const server = await serve(t);
		const { jar: ana } = await signInLocally(server, "ana");
		const { machineId } = await pairLocally(server, ana);
		await pageRequest(server, ana, "PUT", "/api/repositories/octo/score/machine", { machine: machineId });
		const { jar: cy } = await signInLocally(server, "cy");
		const page = machinesPageSchema.parse(
			await (await pageRequest(server, cy, "GET", "/api/machines")).json(),
		);
		expect(page).toEqual({ machines: [], pins: [], documents: {} });
	});
});
