// What the daemon answers on its control socket: status (its view of the connection and what it serves), status-report
// (the whole `chopin status`, status-for-client.ts), add-checkout (lock it, report), reload (the config's checkouts and
// Planner settings), stop (graceful).
import type { PlannerState, RunState } from "@chopin/agent-link/machine";
import type { DaemonPlanner, DaemonStatus, IpcAnswer, IpcHandler, IpcRequest } from "../local/ipc";
import type { Checkout } from "../machine/machine-config";
import type { CliContext } from "../program/context";
import type { ServiceManagerKind } from "../service/names";
import type { ServedCheckouts } from "./checkouts";
import type { ControlLink } from "./control-link";
import type { SandboxReport } from "./sandbox-kind";

export interface RequestDeps {
	status(): DaemonStatus;
	/** The whole `chopin status` for a client that asked for it built here (status-for-client.ts). */
	statusReport(request: Extract<IpcRequest, { type: "status-report" }>): Promise<IpcAnswer<"status-report">>;
	checkouts: ServedCheckouts;
	/** The served state changed: tell the server. */
	report(): void;
	/** The config's checkouts as they are now. */
	reload(): Checkout[];
	/** Applies changed Planner settings from the config; true when they had changed. */
	reloadPlanners?(): Promise<boolean>;
	stop(): void;
}

export function controlRequests(deps: RequestDeps): IpcHandler {
	return async (request) => {
		switch (request.type) {
			case "status":
				return { type: "status", status: deps.status() };
			case "status-report":
				return deps.statusReport(request);
			case "add-checkout": {
				const added = await deps.checkouts.add({
					path: request.path,
					repository: request.repository,
					origin: request.origin,
				});
				if (added) deps.report();
				return { type: "add-checkout", added };
			}
			case "reload": {
				const wanted = deps.reload();
				for (const checkout of wanted) await deps.checkouts.add(checkout);
				for (const served of deps.checkouts.list()) {
					if (!wanted.some((c) => c.path === served.path)) await deps.checkouts.remove(served.path);
				}
				// add() refreshes a served checkout's details too, so report whatever happened.
				deps.report();
				await deps.reloadPlanners?.();
				return { type: "reload" };
			}
			case "stop":
				deps.stop();
				return { type: "stop" };
		}
	};
}

/** The status answer: the link's view, the served checkouts with their access, and the Planners. */
export function daemonStatus(options: {
	ctx: Pick<CliContext, "version" | "paths">;
	server: string;
	startedAt: number;
	link: ControlLink;
	checkouts: ServedCheckouts;
	planners?: (() => PlannerState[]) | undefined;
	/** Which sandbox the backends run in (none, and why, shows in status). */
	sandbox?: SandboxReport | undefined;
	runs?: (() => RunState[]) | undefined;
	service?: ServiceManagerKind | undefined;
}): DaemonStatus {
	const { ctx, link } = options;
	const snap = link.snapshot();
	const iso = (ms: number) => new Date(ms).toISOString();
	const access = new Map(snap.welcome?.repositories.map((r) => [r.repository, r.access]));
	return {
		pid: process.pid,
		version: ctx.version,
		...(options.service && { service: options.service }),
		startedAt: iso(options.startedAt),
		server: options.server,
		logFile: ctx.paths.logFile,
		connection: {
			state: snap.state,
			since: iso(snap.since),
			lastContact: snap.lastContact === undefined ? null : iso(snap.lastContact),
			attempts: snap.attempts,
			...(snap.nextAttemptAt === undefined ? {} : { nextAttemptAt: iso(snap.nextAttemptAt) }),
			...(snap.lastError === undefined ? {} : { lastError: snap.lastError }),
		},
		machine: snap.welcome ? { ...snap.welcome.machine } : null,
		checkouts: options.checkouts.list().map((c) => {
			const known = access.get(c.repository);
			return {
				path: c.path,
				repository: c.repository,
				origin: c.origin,
				...(c.branch ? { branch: c.branch } : {}),
				...(known ? { access: known } : {}),
			};
		}),
		runs: options.runs?.() ?? [],
		planners: mergePlanners(snap.planners, options.planners?.() ?? [], options.sandbox),
	};
}

/** The server's assignments and the local backends, one entry per document. */
function mergePlanners(
	assigned: { document: { id: string; url: string; title: string; repository: string } }[],
	local: PlannerState[],
	sandbox: SandboxReport | undefined,
): DaemonPlanner[] {
	const out = new Map<string, DaemonPlanner>();
	for (const { document } of assigned) {
		out.set(document.id, {
			document: document.id,
			url: document.url,
			title: document.title,
			repository: document.repository,
		});
	}
	for (const p of local) {
		out.set(p.document, {
			...out.get(p.document),
			document: p.document,
			...(p.url ? { url: p.url } : {}),
			state: p.state,
			worktree: p.worktree,
			checkout: p.checkout,
			...(p.pid === undefined ? {} : { pid: p.pid }),
			since: new Date(p.since).toISOString(),
			restarts: p.restarts,
			...(p.reason ? { reason: p.reason } : {}),
			sandbox: p.sandbox,
			...(p.sandbox === "none" && sandbox?.reason ? { sandboxReason: sandbox.reason } : {}),
		});
	}
	return [...out.values()];
}
