import { afterEach, beforeEach, expect, test } from "bun:test";
import { describeStores } from "../store/testing";
import { type ApiServer, createDocument, json, startApiServer } from "../testing/api-server";

describeStores("runs, Planner status and sign-in options API", (t) => {
	let api: ApiServer;
	beforeEach(async () => {
		api = await startApiServer(t.store);
	});
	afterEach(async () => {
		await api.stop();
	});

	test("GET /api/documents/:id/runs shows the cards as Chat does", async () => {
		const id = await createDocument(api);
		expect((await json(await api.call("carol", "GET", `/api/documents/${id}/runs`))).runs).toEqual([]);
		await api.server.context.domain.runs.apply(id, "s1", {
			active: ["r1"],
			paused: [],
			cards: [
				{
					id: "r1",
					name: "Build",
					status: "failed",
					started: 100,
					updated: 120,
					waiting: 0,
					earlierStages: 3,
					stages: [{ id: "a", name: "Compile", status: "running" }],
				},
			],
		});
		const { runs } = (await json(await api.call("carol", "GET", `/api/documents/${id}/runs`))) as unknown as {
			runs: {
				id: string;
				displayStatus: string;
				earlierStages: number;
				stages: { displayStatus: string }[];
			}[];
		};
		expect(runs).toHaveLength(1);
		expect(runs[0]).toMatchObject({ id: "r1", displayStatus: "failed", earlierStages: 3 });
		expect(runs[0]!.stages[0]!.displayStatus).toBe("stopped");
		expect((await api.call("dave", "GET", `/api/documents/${id}/runs`)).status).toBe(404);
		expect((await api.call(null, "GET", `/api/documents/${id}/runs`)).status).toBe(401);
	});

	test("GET /api/documents/:id/planner says no Planner is attached", async () => {
		const id = await createDocument(api);
		expect(await json(await api.call("carol", "GET", `/api/documents/${id}/planner`))).toEqual({
			planner: { state: "unattached" },
		});
		expect((await json(await api.call("dave", "GET", `/api/documents/${id}/planner`))).code).toBe(
			"document-not-found",
		);
	});

	test("GET /api/auth names the mode and, in local mode, the accounts to pick (never a password)", async () => {
		const body = await json(await api.call(null, "GET", "/api/auth"));
		expect(body).toEqual({
			mode: "local",
			accounts: [
				{ login: "alice", name: "Alice", password: false },
				{ login: "bob", name: "Bob", password: false },
				{ login: "carol", name: "Carol", password: true },
				{ login: "dave", name: null, password: false },
			],
		});
		expect(JSON.stringify(body)).not.toContain("carols-password");
	});
});
