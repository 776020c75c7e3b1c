// For the status benches: each compiled chopin binary gets its own paired home and runs its own daemon (`chopin run`)
// against one local server; stop() ends the daemons and removes the homes. Not a test.
import { rmSync } from "node:fs";
import { type MachineServer, makeCliHome, pairHome } from "../apps/cli/src/testing/machine-server";

export interface PairedDaemon {
	binary: string;
	env: Record<string, string>;
	/** The daemon's IPC socket. */
	socket: string;
	daemon: Bun.Subprocess;
	root: string;
}

/** Starts them one by one into `daemons`, so the caller's stopPairedDaemons() stops those started before a failure. */
export async function startPairedDaemons(
	machines: MachineServer,
	binaries: string[],
	daemons: PairedDaemon[],
): Promise<void> {
	for (const binary of binaries) {
		const home = await makeCliHome({ CHOPIN_LOG_LEVEL: "info" });
		await pairHome(machines, home);
		const daemon = Bun.spawn([binary, "run"], {
			env: home.env,
			stdin: "ignore",
			stdout: "ignore",
			stderr: "ignore",
		});
		daemons.push({ binary, env: home.env, socket: home.paths.socket, daemon, root: home.root });
	}
}

export async function stopPairedDaemons(daemons: PairedDaemon[]): Promise<void> {
	for (const { daemon } of daemons) {
		daemon.kill("SIGTERM");
		await daemon.exited;
	}
	for (const { root } of daemons) rmSync(root, { recursive: true, force: true });
}
