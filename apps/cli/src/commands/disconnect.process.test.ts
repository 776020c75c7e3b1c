import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { cliRequest } from "../../../server/src/testing/machines";
import { killCliProcesses, runCliProcess, spawnCli } from "../testing/cli-process";
import {
	type CliHome,
	type MachineServer,
	makeCliHome,
	pairHome,
	startMachineServer,
} from "../testing/machine-server";

const servers: MachineServer[] = [];
const homes: CliHome[] = [];
afterEach(async () => {
	await killCliProcesses();
	for (const s of servers.splice(0)) await s.server.close();
	for (const h of homes.splice(0)) rmSync(h.root, { recursive: true, force: true });
});

async function setup(): Promise<{
	machines: MachineServer;
	h: CliHome;
	credential: string;
	machineId: string;
}> {
	const machines = await startMachineServer();
	servers.push(machines);
	const h = await makeCliHome();
	homes.push(h);
	return { machines, h, ...(await pairHome(machines, h)) };
}

describe("chopin disconnect", () => {
	test("online: stops the daemon (exit 0), revokes the machine, forgets the credential; twice is fine", async () => {
		const { machines, h, credential, machineId } = await setup();
		const daemon = spawnCli(["run"], h.env);
		await daemon.waitFor(/Connected to /);

		const result = await runCliProcess(["disconnect"], h.env);
		expect(result.code).toBe(0);
		expect(result.stdout).toBe("");
		expect(result.stderr).toBe(
			[
				`Stopped the chopin daemon (pid ${daemon.pid}).`,
				`Revoked this machine on ${machines.server.url}.`,
				`Deleted the credential ${h.paths.credentialFile}; machine.json and worktrees stay.`,
				"",
			].join("\n"),
		);
		// The daemon stopped on request (0), not because it heard its own revocation (10).
		expect(await daemon.exited).toBe(0);
		expect(existsSync(h.paths.credentialFile)).toBe(false);
		expect(existsSync(h.paths.machineConfigFile)).toBe(true);
		// The server no longer knows the credential.
		const refused = await cliRequest(machines.target, "GET", "/api/connector/machine", { credential });
		expect(refused.status).toBe(401);
		expect((await machines.server.context.machines.list("ana")).map((m) => m.id)).not.toContain(machineId);

		const again = await runCliProcess(["disconnect"], h.env);
		expect(again).toEqual({
			code: 0,
			stdout: "",
			stderr: "This machine is not paired; there is nothing to disconnect.\n",
		});
	}, 30_000);

	test("a machine already revoked on the server counts as disconnected", async () => {
		const { machines, h, machineId } = await setup();
		await machines.revoke(machineId);
		const result = await runCliProcess(["disconnect"], h.env);
		expect(result.code).toBe(0);
		expect(result.stderr).toContain(`${machines.server.url} had already revoked this machine.`);
		expect(existsSync(h.paths.credentialFile)).toBe(false);
	}, 30_000);

	test("offline (the server stopped): the local credential goes, with a warning, exit 0", async () => {
		const { machines, h } = await setup();
		await machines.server.close();
		servers.splice(0);
		const result = await runCliProcess(["disconnect"], h.env);
		expect(result.code).toBe(0);
		expect(result.stderr).toContain(`warning: could not reach ${machines.server.url} to revoke this machine`);
		expect(result.stderr).toContain("it stays listed there until you disconnect it on the Machines page");
		expect(existsSync(h.paths.credentialFile)).toBe(false);
		const again = await runCliProcess(["disconnect"], h.env);
		expect(again.code).toBe(0);
		expect(again.stderr).toBe("This machine is not paired; there is nothing to disconnect.\n");
	}, 30_000);
});
