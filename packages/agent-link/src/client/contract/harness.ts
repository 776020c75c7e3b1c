/**
 * Wiring for a contract test file: one describe per runtime, each test with a fresh scripted
 * server, and everything closed after it.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from "bun:test";
import { makeRunner, type Runner, type RuntimeName } from "./runtimes";
import type { Json } from "./scenario";
import type { ScenarioName } from "./scenarios";
import { ScriptedServer } from "./scripted-server";

export { RUNTIMES } from "./runtimes";

/** A bearer shaped like a Planner credential, so a leak would be easy to spot. */
export const TOKEN = "chopin_p_contractSuiteToken0123456789abcdefghijklmnopq";
export const DOCUMENT = "https://chopin.example/octo-org/score/plan";

/** Contract tests start a node process and may shrink images: give them room. */
export const CONTRACT_TIMEOUT_MS = 30_000;

export interface Contract {
	readonly runtime: RuntimeName;
	readonly server: ScriptedServer;
	/** Starts a scenario against the scripted server; await it after scripting the server's side. */
	run(name: ScenarioName, params?: unknown): Promise<Json>;
}

/** Registers the hooks for one runtime's describe block. */
export function useContract(runtime: RuntimeName): Contract {
	let runner: Runner;
	let server: ScriptedServer;
	const running: Promise<unknown>[] = [];
	beforeAll(async () => {
		runner = await makeRunner(runtime);
	});
	beforeEach(() => {
		server = new ScriptedServer(TOKEN);
	});
	afterEach(async () => {
		server.stop();
		runner.stopAll();
		await Promise.allSettled(running.splice(0));
	});
	afterAll(() => runner?.dispose());
	return {
		runtime,
		get server() {
			return server;
		},
		run(name, params) {
			const result = runner.run(name, { url: server.url, token: TOKEN, document: DOCUMENT }, params);
			running.push(result);
			return result;
		},
	};
}
