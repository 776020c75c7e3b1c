import { afterEach, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import {
	connectMachine,
	hello,
	helloMachine,
	LOCAL_ENV,
	type MachineClient,
	pageRequest,
	pairLocally,
} from "../testing/machines";
import { startTestServer, type TestServer } from "../testing/server";
import { signInLocally } from "../testing/sign-in";
import type { MachineView } from "./machine-view";

const open: TestServer[] = [];
const sockets: MachineClient[] = [];
afterEach(async () => {
	for (const s of sockets.splice(0)) s.close();
	for (const s of open.splice(0)) await s.close();
});

test("a dropped machine's runs show machine offline for the grace period, then that they need a decision, and continue when it is back", async () => {
	const clock = new ManualClock();
	const server = await startTestServer({ clock, env: { ...LOCAL_ENV, MACHINE_OFFLINE_GRACE_MS: "600000" } });
	open.push(server);
	const target = { fetch: (req: Request) => server.fetch(req), publicUrl: server.context.config.publicUrl };
	const { jar } = await signInLocally(target, "ana");
	const { credential, machineId } = await pairLocally(target, jar);
	const runs = [
		{ id: "r1", status: "running" as const, worktree: "/home/ana/.chopin/runs/r1" },
		{ id: "r2", status: "finished" as const, worktree: "/home/ana/.chopin/runs/r2" },
	];
	const first = await helloMachine(server.url, credential, ["octo/score"]);
	sockets.push(first.client);
	first.client.send({ type: "report", checkouts: [], runs, planners: [], sandbox: { kind: "none" } });
	await first.client.roundTrip();
	await server.context.machines.settled();
	const view = async () => {
		const res = await pageRequest(target, jar, "GET", `/api/machines/${machineId}`);
		return ((await res.json()) as { machine: MachineView }).machine;
	};
	expect((await view()).runs.map((r) => r.displayStatus)).toEqual(["running", "finished"]);

	first.client.close();
	await first.client.closed;
	await new Promise<void>((resolve) => {
		if (!server.context.machines.control.isOnline(machineId)) return resolve();
		const off = server.context.machines.onChange(() => {
			if (server.context.machines.control.isOnline(machineId)) return;
			off();
			resolve();
		});
	});
	await server.context.machines.settled();
	const away = await view();
	expect(away.online).toBe(false);
	expect(away.runs[0]).toMatchObject({
		displayStatus: "machine-offline",
		offlineUntil: clock.now() + 600_000,
	});
	expect(away.runs[1]!.displayStatus).toBe("finished");

	await clock.advance(600_000);
	expect((await view()).runs[0]!.displayStatus).toBe("needs-decision");

	// Back, its hello names the run it still holds: it shows as reported again.
	const back = await connectMachine(server.url, credential);
	sockets.push(back);
	back.send(hello(["octo/score"], { runs: [runs[0]!] }));
	expect((await back.next()).type).toBe("welcome");
	expect((await view()).runs.map((r) => [r.id, r.displayStatus])).toEqual([["r1", "running"]]);
});
