// The machine daemon (`chopin run`): one per state dir, a lock per checkout, the control socket, and the control
// channel kept up until it is stopped (exit 0) or the server refuses the machine for good (its exit code).
import { reconnectBackoff } from "@chopin/agent-link/backoff";
import type { Timer } from "@chopin/agent-link/clock";
import type { Assignment, MachineServerMessage, PlannerState, RunState } from "@chopin/agent-link/machine";
import { type IpcServer, listenIpc } from "../local/ipc";
import { lockDaemon } from "../local/lock";
import { requireCredential } from "../machine/credential";
import { loadMachineConfig, type MachineConfig } from "../machine/machine-config";
import { daemonPlanners } from "../planners/daemon-planners";
import type { PlannerManager } from "../planners/manager";
import { setUpContainment } from "../processes/containment";
import { killAdoptedOrphans } from "../processes/subreaper";
import type { CliContext } from "../program/context";
import { daemonRuns } from "../runs/daemon-runs";
import { RunManager } from "../runs/manager";
import { clientHeader } from "../server-link/client-info";
import { finalRefusalError } from "../server-link/server-errors";
import type { ServiceManagerKind } from "../service/names";
import { CheckoutGate } from "../workspaces/gate";
import { ServedCheckouts } from "./checkouts";
import { ControlLink, type LinkEvent, type MachineState } from "./control-link";
import { recordDaemonEnd } from "./daemon-end";
import { httpReach } from "./reach";
import { controlRequests, daemonStatus } from "./requests";
import { type SandboxReport, sandboxKind } from "./sandbox-kind";
import { daemonSettings } from "./settings";
import { statusForClient } from "./status-for-client";
import { watchStopRequest } from "./stop-request";
import { NetworkWatcher, type Trigger, WakeDetector } from "./triggers";

/** What the next tasks and the tests plug in; every field has a working default. */
/** How often the served checkouts' branch and HEAD are looked at. */
export const POSITION_EVERY_MS = 60_000;

export interface DaemonSeams {
	/** What says "the network is probably back": by default a wake-from-sleep detector and a network watcher. */
	triggers?: readonly Trigger[];
	/** Jitter's randomness (Math.random). */
	random?: () => number;
	/** The Planner backends' states, for hello and report (none until the next task runs them). */
	planners?: () => PlannerState[];
	/** The runs' states, instead of the daemon's own (tests of the channel alone). */
	runs?: () => RunState[];
	/** The documents the server asks this machine to run, each time the set changes. */
	onAssignments?: (assignments: Assignment[]) => void;
	which?: (command: string) => string | null;
	/** Told once the daemon serves its socket and holds its checkouts. */
	started?: (daemon: RunningDaemon) => void;
	/** Where Planner backends clone a repository no checkout serves (GitHub by default). */
	cloneUrl?: (repository: string) => string;
	/** The service manager that runs this daemon (`chopin run --service`): status says so. */
	service?: ServiceManagerKind;
}

export interface RunningDaemon {
	readonly link: ControlLink;
	readonly checkouts: ServedCheckouts;
	/** The Planner backends, when the config names a Planner command (replaced when its settings change). */
	readonly planners: PlannerManager | undefined;
	/** Builds and investigations. */
	readonly runs: RunManager;
	/** Sends a report now (the state changed). */
	report(): void;
	/** Stops gracefully, as `chopin stop` or Ctrl-C does. */
	stop(): void;
}

export async function runDaemon(ctx: CliContext, seams: DaemonSeams = {}): Promise<void> {
	const credential = requireCredential(ctx);
	const config = loadMachineConfig(ctx.paths);
	const settings = daemonSettings(ctx.env);
	// How every backend's (and run's) processes are found and stopped: chosen once, before any starts.
	const containment = setUpContainment({ platform: ctx.platform, env: ctx.env, log: ctx.log });
	const server = credential.server;
	if (config && config.server !== server) {
		ctx.log.warn(
			{ config: config.server, credential: server },
			"machine.json names another server than the credential; serving the credential's",
		);
	}
	const startedAt = ctx.clock.now();
	const daemonLock = await lockDaemon(
		{ locksDir: ctx.paths.locksDir, now: () => ctx.clock.now() },
		ctx.paths.stateDir,
	);
	const checkouts = new ServedCheckouts({
		locksDir: ctx.paths.checkoutLocksDir,
		log: ctx.log,
		now: () => ctx.clock.now(),
	});
	const sandboxFor = (enabled: boolean): SandboxReport =>
		sandboxKind({ platform: ctx.platform, enabled, which: seams.which ?? ((command) => Bun.which(command)) });
	let sandbox = sandboxFor(config?.planner?.sandbox.enabled ?? true);
	// One busy check per repository for every git write the daemon makes to a checkout: Planner backends and runs.
	const gate = new CheckoutGate();
	const state = (): MachineState => ({
		checkouts: checkouts.list().map(({ path, repository, origin, branch }) => {
			const position = checkouts.position(path);
			const current = position ? position.branch : branch;
			return {
				path,
				repository,
				origin,
				...(current ? { branch: current } : {}),
				...(position?.head ? { head: position.head } : {}),
			};
		}),
		runs: seams.runs?.() ?? runs.states(),
		planners: planners(),
		sandbox,
		runner: runs.runner(),
	});
	// Created once the link exists: its events and reports travel on it.
	let manager: PlannerManager | undefined;
	const planners = () => seams.planners?.() ?? manager?.states() ?? [];
	let welcomedBefore = false;
	const link = new ControlLink({
		server,
		token: credential.token,
		client: clientHeader(ctx),
		open: ctx.openWebSocket,
		clock: ctx.clock,
		log: ctx.log,
		backoff: reconnectBackoff({
			maxMs: settings.retryMaxMs,
			...(seams.random ? { random: seams.random } : {}),
		}),
		state,
		finalError: (code, message) =>
			finalRefusalError(code, message, { server, version: ctx.version, upgrade: ctx }),
		triggers: seams.triggers ?? [
			new WakeDetector(ctx.clock),
			new NetworkWatcher(ctx.clock, ctx.networkInterfaces),
		],
		reach: httpReach({ server, fetch: ctx.fetch, clock: ctx.clock, client: clientHeader(ctx) }),
		...(seams.random ? { random: seams.random } : {}),
		handshakeTimeoutMs: settings.handshakeTimeoutMs,
		silenceMs: settings.silenceMs,
		probeMs: settings.probeMs,
		onEvent: (event: LinkEvent) => {
			// A drop pauses every run at once; only a person's resume continues them (never the reconnect).
			if (event.type === "ended" && !(event.outcome.kind === "ended" && event.outcome.why === "stop"))
				void runs.channelDown();
			if (event.type !== "connected") return;
			runs.channelUp();
			void refreshPositions();
			const { machine } = event.welcome;
			if (!welcomedBefore)
				say(ctx, `Connected to ${server} as ${machine.owner}'s machine "${machine.label}".`);
			welcomedBefore = true;
		},
		onMessage: (message: MachineServerMessage) => {
			if (RunManager.isRunMessage(message)) return runs.handle(message);
			if (message.type !== "welcome" && message.type !== "planners") return;
			assignments = message.planners;
			seams.onAssignments?.(message.planners);
			if (manager) void manager.assign(message.planners);
			else if (message.planners.length > 0 && !warnedNoCommand) {
				warnedNoCommand = true;
				ctx.log.warn(
					{ documents: message.planners.map((p) => p.document.id) },
					"Chopin assigned Planner documents to this machine, but no Planner backend command is configured (chopin connect --planner-command)",
				);
			}
		},
	});
	let warnedNoCommand = false;
	const runs = daemonRuns({
		ctx,
		config,
		server,
		machineToken: credential.token,
		sandbox: () => sandbox,
		checkouts: () => checkouts.list(),
		gate,
		send: (message) => link.send(message),
		report: () => link.report(),
		...(seams.cloneUrl ? { cloneUrl: seams.cloneUrl } : {}),
	});
	/** The served checkouts' branch and HEAD, reported when they moved (the page offers HEAD as a build's base). */
	const refreshPositions = async () => {
		if (await checkouts.refreshPositions({ spawn: ctx.spawn, env: ctx.env }).catch(() => false))
			link.report();
	};
	let positionTimer: Timer | undefined;
	const watchPositions = () => {
		positionTimer = ctx.clock.setTimeout(() => {
			void refreshPositions().finally(() => {
				if (!stopping) watchPositions();
			});
		}, POSITION_EVERY_MS);
	};
	/** The server's latest Planner assignments, handed to a manager built after them. */
	let assignments: Assignment[] = [];
	const plannersFor = (machineConfig: MachineConfig) =>
		daemonPlanners({
			ctx,
			config: machineConfig,
			server,
			machineToken: credential.token,
			sandbox,
			gate,
			send: (message) => link.send(message),
			report: () => link.report(),
			...(seams.cloneUrl ? { cloneUrl: seams.cloneUrl } : {}),
		});
	if (config) manager = plannersFor(config);
	let plannerSettings = JSON.stringify(config?.planner);
	/**
	 * `chopin connect` saved other Planner settings (documents, command, --env, sandbox): the backends
	 * stop and start again under the new ones, assigned documents included. Unchanged: nothing happens.
	 */
	const reloadPlanners = async (): Promise<boolean> => {
		const next = loadMachineConfig(ctx.paths);
		if (!next || JSON.stringify(next.planner) === plannerSettings) return false;
		plannerSettings = JSON.stringify(next.planner);
		await manager?.stopAll("its Planner settings changed");
		sandbox = sandboxFor(next.planner?.sandbox.enabled ?? true);
		manager = plannersFor(next);
		running.planners = manager;
		say(ctx, "Planner settings changed: the Planner backends start again under the new ones.");
		if (manager) {
			manager.start();
			if (assignments.length > 0) await manager.assign(assignments);
		}
		link.report();
		return true;
	};
	let stopping = false;
	const stop = () => {
		if (stopping) return;
		stopping = true;
		ctx.log.info("stopping");
		void link.stop();
	};
	const running: { -readonly [K in keyof RunningDaemon]: RunningDaemon[K] } = {
		link,
		checkouts,
		planners: manager,
		runs,
		report: () => link.report(),
		stop,
	};
	const status = () =>
		daemonStatus({
			ctx,
			server,
			startedAt,
			link,
			checkouts,
			planners,
			sandbox,
			runs: seams.runs ?? (() => runs.states()),
			service: seams.service,
		});
	let ipc: IpcServer | undefined;
	let endStopWatch: (() => void) | undefined;
	let failure: unknown;
	try {
		ipc = await listenIpc({
			socket: ctx.paths.socket,
			platform: ctx.platform,
			log: ctx.log,
			handler: controlRequests({
				status,
				statusReport: (request) => statusForClient(request, ctx, status),
				checkouts,
				report: () => link.report(),
				reload: () => loadMachineConfig(ctx.paths)?.checkouts ?? [],
				reloadPlanners,
				// After the answer is written: stopping closes the socket it travels on.
				stop: () => setImmediate(stop),
			}),
		});
		for (const checkout of config?.checkouts ?? []) await checkouts.add(checkout);
		await refreshPositions();
		watchPositions();
		ctx.signal.addEventListener("abort", stop, { once: true });
		if (ctx.signal.aborted) stop();
		endStopWatch = watchStopRequest({ clock: ctx.clock, file: ctx.paths.stopRequestFile, stop });
		const count = checkouts.list().length;
		say(
			ctx,
			`chopin ${ctx.version} (pid ${process.pid}) serves ${count} checkout${count === 1 ? "" : "s"} for ${server}; Ctrl-C or \`chopin stop\` stops it.`,
		);
		if (manager) {
			manager.start();
			if (sandbox.kind === "none")
				say(ctx, `Planner backends run without a sandbox: ${sandbox.reason ?? "none is available"}.`);
		}
		seams.started?.(running);
		try {
			await link.run();
		} catch (error) {
			// Refused for good (revoked, pair again): no backend or run keeps running on a machine Chopin refuses.
			const why = `Chopin refused the machine: ${(error as Error).message}`;
			await Promise.all([manager?.stopAll(why, "refused"), runs.stopAll(why)]);
			throw error;
		}
		await Promise.all([manager?.stopAll("the daemon stopped"), runs.stopAll("the daemon stopped")]);
		say(ctx, "Stopped: the connection was closed and the locks released.");
	} catch (error) {
		failure = error;
		throw error;
	} finally {
		// Whatever ended the daemon, no backend or run outlives it (a no-op when they were stopped above), nor an
		// orphan it adopted.
		positionTimer?.cancel();
		await Promise.all([manager?.stopAll("the daemon stopped"), runs.stopAll("the daemon stopped")]);
		runs.close();
		if (containment.mode === "subreaper") killAdoptedOrphans();
		ctx.signal.removeEventListener("abort", stop);
		await checkouts.releaseAll();
		await ipc?.close();
		endStopWatch?.();
		// Before the lock goes: once another daemon can start, this end is already the last one recorded.
		recordDaemonEnd(ctx, seams.service, failure);
		await daemonLock.release();
	}
}

/** A status line: logged (and echoed on a terminal by the log), and written to a non-terminal stderr too. */
export function say(ctx: Pick<CliContext, "log" | "stderr">, text: string): void {
	ctx.log.info(text);
	if (!ctx.stderr.isTTY) ctx.stderr.write(`${text}\n`);
}
