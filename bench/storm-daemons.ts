/**
 * The real-daemon sample of bench/reconnect-storm.ts: `chopin run` processes (apps/cli/src/testing/cli-process.ts),
 * each with its own home, credential and machine.json naming a seeded machine, watched through their own IPC
 * socket (`status`), so their reconnect is timed as the CLI itself reports it.
 */
import { rmSync } from "node:fs";
import { ipcRequest } from "../apps/cli/src/local/ipc";
import { Secrets } from "../apps/cli/src/local/secrets";
import { saveCredential } from "../apps/cli/src/machine/credential";
import { saveMachineConfig } from "../apps/cli/src/machine/machine-config";
import { type CliProcess, spawnCli } from "../apps/cli/src/testing/cli-process";
import { type CliHome, makeCliHome } from "../apps/cli/src/testing/machine-server";
import { systemClock } from "../packages/agent-link/src/clock";

/** How often a daemon's status is asked while it is awaited: the resolution of its figure. */
const POLL_MS = 10;

export class StormDaemon {
	#process: CliProcess | undefined;

	private constructor(
		readonly id: string,
		private readonly home: CliHome,
	) {}

	/** A home for the seeded machine `id` (credential passed in memory and written to its state dir, never argv). */
	static async create(
		id: string,
		credential: string,
		server: string,
		repository: string,
	): Promise<StormDaemon> {
		const home = await makeCliHome({ CHOPIN_LOG_LEVEL: "warn" });
		const checkout = await home.makeCheckout("repo", repository);
		saveCredential(
			{ paths: home.paths, platform: "linux", secrets: new Secrets() },
			{ server, token: credential, machineId: id, createdAt: new Date().toISOString() },
		);
		saveMachineConfig(home.paths, {
			version: 1,
			server,
			label: id,
			checkouts: [{ path: checkout, repository, origin: `git@github.com:${repository}.git` }],
		});
		return new StormDaemon(id, home);
	}

	start(): void {
		this.#process = spawnCli(["run"], this.home.env);
	}

	/** Whether the daemon says its control channel is connected (false while it cannot be asked). */
	async connected(): Promise<boolean> {
		const answer = await ipcRequest(
			{ socket: this.home.paths.socket, clock: systemClock() },
			{ type: "status" },
		).catch(() => undefined);
		return answer?.status.connection.state === "connected";
	}

	/** Resolves with performance.now() once connected() is `want`, asked every POLL_MS. */
	async until(want: boolean, limitMs = 180_000): Promise<number> {
		const deadline = performance.now() + limitMs;
		while ((await this.connected()) !== want) {
			if (performance.now() > deadline)
				throw new Error(`daemon ${this.id}: never ${want ? "connected" : "cut off"}`);
			await Bun.sleep(POLL_MS);
		}
		return performance.now();
	}

	async stop(): Promise<void> {
		this.#process?.kill("SIGTERM");
		await this.#process?.exited;
		rmSync(this.home.root, { recursive: true, force: true });
	}
}
