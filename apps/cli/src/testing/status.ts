// A paired test home for status (a credential and a machine.json on a server nobody listens on) and a daemon's control
// socket that answers status as a daemon of a given version would: for tests of what status gathers and prints.

import { type IpcServer, listenIpc } from "../local/ipc";
import { ensurePrivateDir } from "../local/paths";
import { saveCredential } from "../machine/credential";
import { machineConfigSchema, saveMachineConfig } from "../machine/machine-config";
import { closedOrigin } from "./closed-port";
import type { TestContext } from "./context";
import { sampleCredential } from "./credential";
import { sampleDaemonStatus } from "./daemon-status";

/** The value of the Planner's API_KEY: searched for in every output. */
export const ENV_VALUE = "super-secret-env-value";

/**
 * Writes a credential and a machine.json (a checkout, an ACP command, a Planner with an --env
 * value) for a server nobody listens on: status's call to it is refused at once, on loopback.
 * Returns that server's origin.
 */
export function pairForStatus(ctx: TestContext): string {
	const server = closedOrigin();
	saveCredential(ctx, sampleCredential({ server }));
	saveMachineConfig(
		ctx.paths,
		machineConfigSchema.parse({
			version: 1,
			server,
			label: "laptop",
			checkouts: [
				{ path: "/src/score", repository: "octo-org/score", origin: "git@github.com:octo-org/score.git" },
			],
			acpCommand: ["gemini", "--acp"],
			planner: {
				command: ["my-planner"],
				agent: "copilot",
				env: { API_KEY: ENV_VALUE },
				documents: [{ document: "doc_1" }],
			},
		}),
	);
	return server;
}

/** Serves the context's control socket, answering status as daemon pid 777 of `version` would. */
export function serveDaemonStatus(
	ctx: TestContext,
	server: string,
	version: string,
	overrides: Parameters<typeof sampleDaemonStatus>[0] = {},
): Promise<IpcServer> {
	ensurePrivateDir(ctx.paths.stateDir);
	return listenIpc({
		socket: ctx.paths.socket,
		platform: "linux",
		handler: async (request) => {
			if (request.type !== "status") throw new Error("unexpected request");
			return {
				type: "status",
				status: sampleDaemonStatus({
					pid: 777,
					version,
					server,
					logFile: ctx.paths.logFile,
					checkouts: [{ path: "/src/score", repository: "octo-org/score", access: "ok" }],
					...overrides,
				}),
			};
		},
	});
}
