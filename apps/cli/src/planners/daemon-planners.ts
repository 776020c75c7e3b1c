// Builds the daemon's PlannerManager from its context: the machine credential for the credential requests, the
// configured command, --env values and sandbox, the state dir as base dir, and where planner-events go.
import type { MachineClientMessage } from "@chopin/agent-link/machine";
import type { SandboxReport } from "../daemon/sandbox-kind";
import type { MachineConfig } from "../machine/machine-config";
import type { CliContext } from "../program/context";
import { ServerApi } from "../server-link/server-api";
import type { CheckoutGate } from "../workspaces/gate";
import { eventMessage, PlannerManager } from "./manager";
import { PlannerSupervisor } from "./supervisor";

export interface DaemonPlannerOptions {
	ctx: CliContext;
	config: MachineConfig;
	server: string;
	machineToken: string;
	sandbox: SandboxReport;
	/** The daemon's one busy check per repository, shared with the runs. */
	gate: CheckoutGate;
	/** Sends a planner-event (dropped while the channel is down: the next hello carries the state). */
	send(message: MachineClientMessage): void;
	/** The state changed: report it. */
	report(): void;
	/** Where to clone a repository no checkout serves (GitHub by default). */
	cloneUrl?: (repository: string) => string;
}

export function daemonPlanners(options: DaemonPlannerOptions): PlannerManager | undefined {
	const { ctx, config } = options;
	const planner = config.planner;
	if (!planner) return undefined;
	for (const value of Object.values(planner.env)) ctx.secrets.add(value);
	const api = new ServerApi(ctx, options.server);
	return new PlannerManager({
		planner,
		checkouts: config.checkouts,
		log: ctx.log,
		create: (document, callbacks) =>
			new PlannerSupervisor(document, {
				clock: ctx.clock,
				log: ctx.log,
				secrets: ctx.secrets,
				platform: ctx.platform,
				server: options.server,
				baseDir: ctx.paths.stateDir,
				command: planner.command,
				env: planner.env,
				baseEnv: ctx.env,
				sandbox: {
					kind: options.sandbox.kind,
					writable: planner.sandbox.write,
					hidden: [ctx.paths.credentialFile, ctx.paths.machineConfigFile],
				},
				git: { spawn: ctx.spawn, env: ctx.env },
				gate: options.gate,
				cloneUrl: options.cloneUrl ?? ((repository) => `https://github.com/${repository}.git`),
				plannerCredential: (doc) => api.plannerCredential(options.machineToken, doc),
				githubToken: () => api.githubToken(options.machineToken),
				onEvent: (doc, event, reason) => options.send(eventMessage(doc, event, reason)),
				onChange: () => options.report(),
				onMachineRefused: callbacks.onMachineRefused,
			}),
	});
}
