// The daemon's RunManager, built from its context: a run's checkout (the served one, else the connector's clone),
// its workspace, its agent launched in the sandbox and its own contained processes, its GitHub token file for a
// build, its record on disk, the terminal to ask permission on, and the follow-up to the Planner when it ends.
import { join } from "node:path";
import type { MachineClientMessage, RunOffer } from "@chopin/agent-link/machine";
import { MCP_PATH } from "@chopin/agent-link/mcp";
import type { SandboxReport } from "../daemon/sandbox-kind";
import type { Checkout, MachineConfig } from "../machine/machine-config";
import { LineSplitter } from "../planners/output-lines";
import { Renewals, scheduleGitHubRenewal } from "../planners/renewal";
import { sandboxLaunch } from "../planners/sandbox-launch";
import { TokenFile } from "../planners/token-file";
import { cloneDir, ensureClone } from "../planners/workspace";
import { launchScope } from "../processes/scope";
import { type CliContext, canPrompt } from "../program/context";
import { ServerApi } from "../server-link/server-api";
import type { CheckoutGate } from "../workspaces/gate";
import { syncNamespace, type WorkspaceScope } from "../workspaces/refs";
import {
	listRunRecords,
	readRunRecord,
	runEnded,
	runWorkspacePath,
	writeRunRecord,
} from "../workspaces/run-record";
import { createRunWorkspace, removeRunWorkspace, runBranch } from "../workspaces/run-workspace";
import { syncWorkspace } from "../workspaces/sync";
import { sendFollowUp } from "./follow-up";
import { RunManager } from "./manager";
import { TerminalPrompt } from "./permissions";
import { type AgentProcess, MachineRun, type RunParts, type RunWorkspace } from "./run";

export interface DaemonRunsOptions {
	ctx: CliContext;
	config: MachineConfig | undefined;
	server: string;
	machineToken: string;
	/** The sandbox the machine's agents run in (the same for runs and Planner backends). */
	sandbox: () => SandboxReport;
	checkouts: () => Checkout[];
	gate: CheckoutGate;
	send(message: MachineClientMessage): boolean;
	report(): void;
	/** Where to clone a repository no checkout serves (GitHub by default). */
	cloneUrl?: (repository: string) => string;
}

/** What the page says when this machine has no ACP agent to run builds with. */
export const NO_AGENT_REASON =
	"no coding agent is configured on this machine: run `chopin connect -- <ACP agent command>` there";

export function daemonRuns(options: DaemonRunsOptions): RunManager {
	const { ctx } = options;
	settleLeftRuns(ctx);
	const acpCommand = options.config?.acpCommand;
	// Only with a person at the terminal (the daemon in the foreground); under a service every request is declined.
	const prompt = canPrompt(ctx)
		? new TerminalPrompt({ input: ctx.stdin.stream, write: (text) => ctx.stderr.write(text) })
		: undefined;
	return new RunManager({
		log: ctx.log,
		unavailable: acpCommand ? undefined : NO_AGENT_REASON,
		send: options.send,
		report: options.report,
		secret: (token) => ctx.secrets.add(token),
		close: () => prompt?.close(),
		async removeWorkspace(runId) {
			const record = readRunRecord(ctx.paths.stateDir, runId);
			if (!record) return false;
			const removed = await removeRunWorkspace({ spawn: ctx.spawn, env: ctx.env }, options.gate, {
				stateDir: ctx.paths.stateDir,
				record,
			});
			ctx.log.info({ run: runId, keepRef: removed.keepRef }, "a discarded run's workspace was deleted");
			return true;
		},
		create: (offer, token) =>
			new MachineRun(offer, token, runParts(options, offer, acpCommand ?? [], prompt)),
	});
}

/**
 * Runs a daemon left live when it stopped without ending them (killed, a crash) are over: their processes went
 * with it. Their records say stopped, so `chopin workspaces prune` may remove them in time; the server, which
 * no longer hears of them, shows them lost and never starts them again by itself.
 */
function settleLeftRuns(ctx: CliContext): void {
	for (const listed of listRunRecords(ctx.paths.stateDir)) {
		if (!listed.record || runEnded(listed.record)) continue;
		try {
			writeRunRecord(ctx.paths.stateDir, { ...listed.record, status: "stopped", endedAt: ctx.clock.now() });
			ctx.log.info({ run: listed.id }, "a run the previous daemon left unfinished is marked stopped");
		} catch (error) {
			ctx.log.warn(
				{ run: listed.id, err: error },
				"could not mark a run the previous daemon left as stopped",
			);
		}
	}
}

function runParts(
	options: DaemonRunsOptions,
	offer: RunOffer,
	acpCommand: readonly string[],
	prompt: TerminalPrompt | undefined,
): RunParts {
	const { ctx } = options;
	const stateDir = ctx.paths.stateDir;
	const git = { spawn: ctx.spawn, env: ctx.env };
	const api = new ServerApi(ctx, options.server);
	const scope: WorkspaceScope = { kind: "run", id: offer.id };
	const tokensDir = join(stateDir, "tokens", offer.id);
	const githubFile = new TokenFile(join(tokensDir, "github-token"));
	let renewals: Renewals | undefined;
	let checkout: string | undefined;
	const createdAt = ctx.clock.now();
	const record = (run: MachineRun) =>
		writeRunRecord(stateDir, {
			version: 1,
			id: offer.id,
			kind: offer.kind,
			document: { id: offer.document.id, url: offer.document.url },
			repository: offer.document.repository,
			checkout: run.workspace?.checkout ?? checkout ?? stateDir,
			workspace: run.workspace?.path ?? runWorkspacePath(stateDir, offer.id),
			branch: run.workspace?.branch ?? runBranch(offer.id),
			base: offer.base,
			status: run.status,
			createdAt,
			...(run.ended && { endedAt: ctx.clock.now() }),
		});

	return {
		clock: ctx.clock,
		log: ctx.log,
		version: ctx.version,
		acpCommand,
		baseEnv: ctx.env,
		mcp: { url: new URL(MCP_PATH, options.server).href, server: options.server, bridge: ctx.selfCommand },
		plannedWorkspace: (o) => runWorkspacePath(stateDir, o.id),
		async prepare(o): Promise<RunWorkspace> {
			const repository = o.document.repository.toLowerCase();
			checkout = options.checkouts().find((c) => c.repository.toLowerCase() === repository)?.path;
			if (!checkout) {
				checkout = cloneDir(stateDir, o.document.repository);
				const url = (options.cloneUrl ?? ((r) => `https://github.com/${r}.git`))(o.document.repository);
				const fetched = await ensureClone(git, options.gate, { dir: checkout, url });
				if (fetched.fetchError)
					ctx.log.warn(
						{ run: o.id, checkout },
						"could not fetch the clone; making the workspace from it as it is",
					);
			}
			const workspace = await createRunWorkspace(git, options.gate, {
				stateDir,
				runId: o.id,
				checkout,
				base: o.base,
			});
			return {
				checkout: workspace.checkout,
				path: workspace.path,
				branch: workspace.branch ?? runBranch(o.id),
			};
		},
		async bringBack(_o, workspace) {
			const synced = await syncWorkspace(git, options.gate, {
				checkout: workspace.checkout,
				workspace: workspace.path,
				scope,
			});
			return synced.synced ? `${syncNamespace(scope)}/` : undefined;
		},
		async launch({ workspace, argv, env }): Promise<AgentProcess> {
			const sandbox = options.sandbox();
			// The same sandbox as a Planner backend's, with the run's workspace as the one writable folder.
			const { argv: command, tmp } = await sandboxLaunch(git, {
				kind: sandbox.kind,
				command: argv,
				checkout: workspace.checkout,
				workspace: workspace.path,
				tmpDir: join(stateDir, "tmp", offer.id),
				writable: options.config?.planner?.sandbox.write ?? [],
				hidden: [ctx.paths.credentialFile, ctx.paths.machineConfigFile],
				readable: [tokensDir],
			});
			const listeners: ((line: string) => void)[] = [];
			const lines = new LineSplitter({
				redact: (text) => text,
				emit: (line) => {
					const text = line.kind === "line" ? line.text : `(a line of ${line.bytes} bytes was left out)`;
					for (const listener of listeners) listener(text);
				},
			});
			const launched = launchScope({
				argv: command,
				cwd: workspace.path,
				env: tmp ? { ...env, TMPDIR: tmp } : env,
				platform: ctx.platform,
				clock: ctx.clock,
				namespaced: sandbox.kind === "bwrap",
				stdin: "pipe",
				onStderr: (chunk) => lines.write(chunk),
			});
			void launched.closed.then(() => lines.end());
			ctx.log.info(
				{
					run: offer.id,
					pid: launched.pid,
					sandbox: sandbox.kind,
					containment: launched.mode,
					workspace: workspace.path,
				},
				`started the agent of ${offer.id}`,
			);
			return {
				pid: launched.pid,
				stdin: launched.stdin!,
				stdout: launched.stdout!,
				exited: launched.exited,
				onOutput: (listener) => listeners.push(listener),
				stop: () => launched.stop(),
				freeze: () => launched.freeze(),
				thaw: () => launched.thaw(),
			};
		},
		async githubToken() {
			const token = await api.githubToken(options.machineToken);
			if (!token) return undefined;
			ctx.secrets.add(token.token, token.expiresAt);
			githubFile.write(token.token);
			renewals = new Renewals({
				clock: ctx.clock,
				log: ctx.log,
				document: () => offer.document.id,
				onRefused: () => githubFile.remove(),
			});
			scheduleGitHubRenewal(renewals, {
				expiresAt: token.expiresAt,
				fetch: () => api.githubToken(options.machineToken),
				write: (next) => githubFile.write(next),
				secret: (next, expiresAt) => ctx.secrets.add(next, expiresAt),
			});
			return { token, file: githubFile.path };
		},
		permissions: () => prompt,
		send: options.send,
		changed(run) {
			if (run.ended) {
				renewals?.cancel();
				githubFile.remove();
			}
			try {
				record(run);
			} catch (error) {
				ctx.log.warn({ run: offer.id, err: error }, "could not write the run's record");
			}
			options.report();
		},
		async followUp(token, message) {
			const answer = await sendFollowUp({
				server: options.server,
				token,
				message,
				version: ctx.version,
				fetch: ctx.fetch,
			});
			ctx.log.info(
				{ run: offer.id, ok: answer.ok, reply: answer.text.slice(0, 200) },
				answer.ok ? "the Planner was told the run ended" : "the Planner could not be told the run ended",
			);
		},
	};
}
