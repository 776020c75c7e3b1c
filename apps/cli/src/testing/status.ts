// A paired test home for status (a credential and a machine.json on a server nobody listens on) and a daemon's control
// socket that answers status and status-report as a daemon of a given version would: for tests of what status gathers
// and prints.

import { statusForClient } from "../daemon/status-for-client";
import { type IpcRequest, type IpcServer, listenIpc } from "../local/ipc";
import { ensurePrivateDir, pathsFromEnvironment } from "../local/paths";
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

/** A fake daemon's control socket, and the types of the requests it was sent, in order. */
export type FakeDaemon = IpcServer & { readonly requests: IpcRequest["type"][] };

/**
 * Serves the context's control socket, answering as daemon pid 777 of `version` would: status with its sample status,
 * status-report with the daemon's own code (status-for-client.ts) run on that status, as a daemon started with the
 * context's environment (its paths found from that environment as a real process finds them).
 */
export async function serveDaemonStatus(
	ctx: TestContext,
	server: string,
	version: string,
	overrides: Parameters<typeof sampleDaemonStatus>[0] = {},
): Promise<FakeDaemon> {
	ensurePrivateDir(ctx.paths.stateDir);
	const status = () =>
		sampleDaemonStatus({
			pid: 777,
			version,
			server,
			logFile: ctx.paths.logFile,
			checkouts: [{ path: "/src/score", repository: "octo-org/score", access: "ok" }],
			...overrides,
		});
	const { paths } = pathsFromEnvironment(ctx.platform, ctx.env, ctx.cwd);
	const requests: IpcRequest["type"][] = [];
	const ipc = await listenIpc({
		socket: ctx.paths.socket,
		platform: "linux",
		handler: async (request) => {
			requests.push(request.type);
			if (request.type === "status") return { type: "status", status: status() };
			if (request.type === "status-report")
				return statusForClient(request, { ...ctx, version, paths }, status);
			throw new Error("unexpected request");
		},
	});
	return Object.assign(ipc, { requests });
}
