// One build or investigation on this machine: its workspace, its ACP agent started in the run's own contained
// processes, the prompt, its log, and what a person or the network does to it: a dropped control channel pauses it
// at once (every process stopped, an open permission question withdrawn), only a person's resume continues it,
// a stop ends it. Its branches come back to the person's checkout when it ends.
import type {
	RequestPermissionRequest,
	RequestPermissionResponse,
	StopReason,
} from "@agentclientprotocol/sdk";
import type { Clock } from "@chopin/agent-link/clock";
import type {
	GitHubToken,
	MachineClientMessage,
	MachineRunStatus,
	RunOffer,
	RunState,
} from "@chopin/agent-link/machine";
import { createRedactor } from "@chopin/agent-link/redact";
import type { Logger } from "../local/log";
import {
	type AcpSession,
	type AgentStreams,
	type ChopinMcp,
	startAcpSession,
	startLimit,
} from "./acp-client";
import { CANCELLED, declined, describeRequest, type PermissionPrompt } from "./permissions";
import { runPrompt } from "./prompt";
import { runEnvironment } from "./run-env";
import { RunLog } from "./run-log";

/** After a person's stop the agent has this long to end its turn before its processes are stopped. */
export const CANCEL_GRACE_MS = 3_000;

const FINAL: ReadonlySet<MachineRunStatus> = new Set(["finished", "failed", "stopped"]);

/** Where a run works. */
export interface RunWorkspace {
	/** The person's checkout (or the connector's clone) it was made from. */
	checkout: string;
	path: string;
	branch: string;
}

/** The run's agent as started: its streams, its end, and control over every process it starts. */
export interface AgentProcess extends AgentStreams {
	readonly pid: number | undefined;
	readonly exited: Promise<{ code: number | null; signal: string | null; error?: string }>;
	/** Each line the agent wrote to stderr (and its processes' output). */
	onOutput(listener: (line: string) => void): void;
	stop(): Promise<void>;
	freeze(): Promise<void>;
	thaw(): Promise<void>;
}

/** What a run needs from the machine: its workspace, processes, tokens, where it records itself and sends. */
export interface RunParts {
	clock: Clock;
	log: Logger;
	version: string;
	/** The ACP command after `chopin connect --`. */
	acpCommand: readonly string[];
	/** The connector's own environment. */
	baseEnv: Readonly<Record<string, string | undefined>>;
	mcp: Omit<ChopinMcp, "token">;
	/** Where the workspace will be, before it is made (status shows it). */
	plannedWorkspace(offer: RunOffer): string;
	prepare(offer: RunOffer): Promise<RunWorkspace>;
	/** Brings the workspace's branches into the checkout; answers where they are, for the log. */
	bringBack(offer: RunOffer, workspace: RunWorkspace): Promise<string | undefined>;
	launch(options: {
		offer: RunOffer;
		workspace: RunWorkspace;
		argv: readonly string[];
		env: Record<string, string>;
	}): Promise<AgentProcess>;
	githubToken(): Promise<{ token: GitHubToken; file: string } | undefined>;
	/** The terminal to ask permission on, when there is one (the daemon in the foreground). */
	permissions(): PermissionPrompt | undefined;
	send(message: MachineClientMessage): boolean;
	/** The run's state changed: report, and write its record. */
	changed(run: MachineRun): void;
	/** Tells the document's Planner the run ended (invoke_planner as "system"). */
	followUp(token: string, message: string): Promise<void>;
}

export class MachineRun {
	readonly offer: RunOffer;
	readonly log: RunLog;
	readonly #p: RunParts;
	readonly #token: string;
	#status: MachineRunStatus = "preparing";
	#reason: string | undefined;
	#workspace: RunWorkspace | undefined;
	#agent: AgentProcess | undefined;
	#session: AcpSession | undefined;
	#paused = false;
	#gate = settled();
	#stop: { reason: string } | undefined;
	#permission: AbortController | undefined;
	#endedAt: number | undefined;
	#done: Promise<void> | undefined;

	constructor(offer: RunOffer, token: string, parts: RunParts) {
		this.offer = offer;
		this.#token = token;
		this.#p = parts;
		const redact = createRedactor([token]);
		this.log = new RunLog({
			clock: parts.clock,
			redact,
			send: (entries) => parts.send({ type: "run-log", run: offer.id, entries }),
		});
	}

	get id(): string {
		return this.offer.id;
	}

	get status(): MachineRunStatus {
		return this.#status;
	}

	get ended(): boolean {
		return FINAL.has(this.#status);
	}

	get workspace(): RunWorkspace | undefined {
		return this.#workspace;
	}

	get reason(): string | undefined {
		return this.#reason;
	}

	/** As hello and report carry it. */
	state(): RunState {
		return {
			id: this.id,
			status: this.#status,
			worktree: this.#workspace?.path ?? this.#p.plannedWorkspace(this.offer),
			document: this.offer.document.id,
			kind: this.offer.kind,
			...(this.#workspace && { branch: this.#workspace.branch }),
			...(this.#endedAt !== undefined && { endedAt: this.#endedAt }),
		};
	}

	/** Runs it to its end; resolves once it has ended, whatever ended it. */
	start(): Promise<void> {
		this.#done ??= this.#run();
		return this.#done;
	}

	/** The control channel dropped: every process stops where it is, an open question is withdrawn. */
	async pause(why: string): Promise<void> {
		if (this.ended || this.#paused) return;
		this.#paused = true;
		this.#gate = pending();
		this.#permission?.abort(
			`the connection to Chopin dropped, so run ${this.id} is paused; this is asked again if it resumes`,
		);
		await this.#agent?.freeze();
		this.#set("paused", why);
		this.log.add(
			"note",
			`Paused: ${why}. It continues only when a person resumes it on the document's page.`,
		);
	}

	/** A person's resume: the processes go on where they were, a withdrawn question is asked again. */
	async resume(): Promise<{ ok: boolean; message?: string }> {
		if (this.ended) return { ok: false, message: `Run ${this.id} has ended (${this.#status}).` };
		if (!this.#paused) return { ok: true };
		this.#paused = false;
		await this.#agent?.thaw();
		this.#set(this.#session ? "running" : "preparing");
		this.log.add("note", "Resumed.");
		this.#gate.open();
		return { ok: true };
	}

	/** Ends the run: the agent is asked to cancel (when it can act on it), then every process is stopped. */
	async stop(reason: string): Promise<void> {
		if (this.ended) return;
		this.#stop ??= { reason };
		this.#permission?.abort(`run ${this.id} was stopped`);
		this.#gate.open();
		if (this.#session && !this.#paused) {
			await this.#session.cancel();
			const over = new AbortController();
			const graceOver = this.#p.clock.sleep(CANCEL_GRACE_MS, over.signal).catch(() => {});
			await Promise.race([this.#done, graceOver]);
			over.abort();
		}
		await this.#agent?.stop();
		await this.#done;
	}

	async #run(): Promise<void> {
		const { offer } = this;
		const p = this.#p;
		let outcome: { status: MachineRunStatus; reason?: string };
		try {
			this.#set("preparing");
			this.log.add("note", `Preparing a workspace at ${offer.base.slice(0, 12)}.`);
			const workspace = await p.prepare(offer);
			this.#workspace = workspace;
			// Not its path: the log is every member's to read, the path (a home folder) only its machine's owner's.
			this.log.add("note", `Workspace ready on the branch ${workspace.branch}.`);
			p.changed(this);
			await this.#gate.wait();
			if (this.#stop) throw new Stopped();
			outcome = await this.#drive(workspace);
		} catch (error) {
			outcome =
				error instanceof Stopped || this.#stop
					? { status: "stopped", reason: this.#stop?.reason ?? "stopped" }
					: { status: "failed", reason: (error as Error).message };
		}
		await this.#finish(outcome);
	}

	/** The agent, its session and the prompt; answers how the run ended. */
	async #drive(workspace: RunWorkspace): Promise<{ status: MachineRunStatus; reason?: string }> {
		const { offer } = this;
		const p = this.#p;
		const github = offer.kind === "build" ? await p.githubToken().catch(() => undefined) : undefined;
		const env = runEnvironment(p.baseEnv, {
			url: p.mcp.server,
			run: offer.id,
			kind: offer.kind,
			document: offer.document.url,
			checkout: workspace.checkout,
			workspace: workspace.path,
			github: github && { ...github.token, file: github.file },
		});
		const redact = createRedactor([this.#token, ...(github ? [github.token.token] : [])]);
		const agent = await p.launch({ offer, workspace, argv: p.acpCommand, env });
		this.#agent = agent;
		agent.onOutput((line) => this.log.add("output", redact(line)));
		// Paused while it was starting: it starts stopped, like everything else of the run.
		if (this.#paused) await agent.freeze();
		const started = new AbortController();
		const session = await startAcpSession({
			streams: agent,
			cwd: workspace.path,
			mcp: { ...p.mcp, token: this.#token },
			version: p.version,
			// Time paused (the control channel down) does not count against the agent's start.
			startLimit: startLimit(p.clock, { counts: () => !this.#paused, signal: started.signal }),
			onUpdate: (update) => this.log.update(update),
			onPermission: (request, signal) => this.#permissionFor(request, signal),
		}).finally(() => started.abort());
		this.#session = session;
		this.log.add("note", `The agent started (MCP over ${session.mcpTransport}).`);
		if (!this.#paused) this.#set("running");
		let stopReason: StopReason;
		try {
			stopReason = await session.prompt(runPrompt(offer, workspace));
		} catch {
			if (this.#stop) throw new Stopped();
			const exit = await Promise.race([agent.exited, p.clock.sleep(1000).then(() => undefined)]);
			const how =
				exit?.error ?? (exit?.signal ? `was ended by ${exit.signal}` : `exited with code ${exit?.code}`);
			return {
				status: "failed",
				reason: `The agent ${exit ? how : "closed its connection"} before it finished.`,
			};
		}
		if (this.#stop) return { status: "stopped", reason: this.#stop.reason };
		switch (stopReason) {
			case "end_turn":
				return { status: "finished" };
			case "max_tokens":
				return { status: "finished", reason: "The agent reached its token limit." };
			case "max_turn_requests":
				return { status: "finished", reason: "The agent reached its limit of requests in one turn." };
			case "refusal":
				return { status: "failed", reason: "The agent refused to go on." };
			case "cancelled":
				return { status: "failed", reason: "The agent cancelled its turn." };
		}
	}

	async #permissionFor(
		request: RequestPermissionRequest,
		signal: AbortSignal,
	): Promise<RequestPermissionResponse> {
		const what = describeRequest(request);
		for (;;) {
			if (this.#stop || signal.aborted) return CANCELLED;
			if (this.#paused) {
				await this.#gate.wait();
				continue;
			}
			const prompt = this.#p.permissions();
			if (!prompt) {
				this.log.add("permission", `Declined "${what}": nobody can be asked on this machine (no terminal).`);
				return declined(request);
			}
			this.log.add("permission", `Asking on the machine's terminal: ${what}`);
			const controller = new AbortController();
			const onAbort = () => controller.abort(`run ${this.id} no longer waits for it`);
			signal.addEventListener("abort", onAbort, { once: true });
			this.#permission = controller;
			const about = `${this.offer.kind} for “${this.offer.document.title}”`;
			const optionId = await prompt.ask({ run: this.id, about, request }, controller.signal);
			signal.removeEventListener("abort", onAbort);
			this.#permission = undefined;
			if (optionId !== undefined) {
				const name = request.options.find((o) => o.optionId === optionId)?.name ?? optionId;
				this.log.add("permission", `Answered on the terminal (${name}): ${what}`);
				return { outcome: { outcome: "selected", optionId } };
			}
			this.log.add("permission", `Withdrawn: ${what}`);
		}
	}

	async #finish(outcome: { status: MachineRunStatus; reason?: string }): Promise<void> {
		const p = this.#p;
		this.#permission?.abort(`run ${this.id} ended`);
		this.#session?.close();
		await this.#agent?.stop();
		if (this.#workspace) {
			try {
				const where = await p.bringBack(this.offer, this.#workspace);
				if (where) this.log.add("note", `Its branches are in the checkout under ${where}.`);
			} catch (error) {
				p.log.warn({ run: this.id, err: error }, "could not bring the run's branches into the checkout");
				this.log.add(
					"note",
					`Its branches could not be brought into the checkout: ${(error as Error).message}`,
				);
			}
		}
		this.#endedAt = p.clock.now();
		// The log first, so a page that reads the run ended has every line of it.
		this.log.add("note", `Ended: ${outcome.status}${outcome.reason ? ` (${outcome.reason})` : ""}.`);
		this.log.flush(true);
		this.#set(outcome.status, outcome.reason);
		const branch = this.#workspace ? ` Its work is on the branch ${this.#workspace.branch}.` : "";
		void p
			.followUp(
				this.#token,
				`The ${this.offer.kind} ${this.id} that @${this.offer.requestedBy} started ended: ${outcome.status}${outcome.reason ? ` (${outcome.reason})` : ""}.${branch} Its card on the document's page has its result and links.`,
			)
			.catch((error) =>
				p.log.info(
					{ run: this.id, reason: (error as Error).message },
					"the run's follow-up to the Planner was not sent",
				),
			);
	}

	#set(status: MachineRunStatus, reason?: string): void {
		this.#status = status;
		this.#reason = reason;
		this.#p.send({
			type: "run-status",
			run: this.id,
			status,
			...(reason && { reason: reason.slice(0, 4000) }),
			...(this.#workspace && { workspace: { path: this.#workspace.path, branch: this.#workspace.branch } }),
		});
		this.#p.changed(this);
	}
}

/** Thrown inside the run when a stop came while it was preparing. */
class Stopped extends Error {}

/** A gate a paused run waits at: open when not paused. */
interface Gate {
	wait(): Promise<void>;
	open(): void;
}

function settled(): Gate {
	return { wait: () => Promise.resolve(), open: () => {} };
}

function pending(): Gate {
	let open!: () => void;
	const opened = new Promise<void>((resolve) => {
		open = resolve;
	});
	return { wait: () => opened, open };
}
