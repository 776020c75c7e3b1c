// Builds and investigations on paired machines (ctx.builds): a person's start becomes an offer to their chosen
// machine, the machine claims it once and reports it, the run's agent reports through /mcp with its own credential,
// and people stop, resume or discard it. Live on the document's page; a machine away shows on its runs.
import type { Timer } from "@chopin/agent-link/clock";
import type { MachineClientMessage, RunState } from "@chopin/agent-link/machine";
import type { BriefResult } from "@chopin/agent-link/mcp";
import { briefResult } from "./brief";
import { allLive, type Build, findByCredential, getBuild, hasLive, listForDocument } from "./build-rows";
import type { BuildView } from "./build-view";
import { discardRun, resumeBuild, sendHeld, stopBuild } from "./controls";
import { BuildsCore, type BuildsDeps } from "./core";
import { isRunCredential, runCredentialDigest, sameDigest } from "./credentials";
import { buildNotFound } from "./errors";
import { LOG_PAGE_MAX, type LogLine, readLog } from "./log-lines";
import type { BuildMachine } from "./machine-port";
import { handleRunMessage, machineHello, machineReport, machineRevoked } from "./machine-side";
import { type RunReport, reportToRun } from "./reports";
import { type StartInput, startBuild } from "./start";

export type { BuildsDeps };

/** Who holds a run credential: the run, and its machine (whose owner it acts as). */
export interface RunPrincipal {
	build: Build;
	machine: BuildMachine;
}

type RunMessage = Extract<
	MachineClientMessage,
	{ type: "run-claim" | "run-status" | "run-log" | "run-control-result" }
>;

export class Builds {
	readonly #core: BuildsCore;
	/** Whether each machine was online when last seen, to publish its runs when that changes. */
	readonly #online = new Map<string, boolean>();
	/** Per away machine with live runs: publishes them again when the grace ends (needs-decision). */
	readonly #graceTimers = new Map<string, Timer>();

	constructor(deps: BuildsDeps) {
		this.#core = new BuildsCore(deps);
	}

	/** Start-up: every machine is away, so each one's live runs show needs-decision when its grace ends. */
	async boot(): Promise<void> {
		const machines = new Set((await allLive(this.#core.deps.store)).map((b) => b.machineId));
		for (const machineId of machines) await this.#armGrace(machineId);
	}

	/** At server stop: timers end. */
	shutdown(): void {
		this.#core.stop();
		for (const timer of this.#graceTimers.values()) timer.cancel();
		this.#graceTimers.clear();
	}

	/** Resolves once the changes and events under way have finished (tests). */
	settled(): Promise<void> {
		return this.#core.settled();
	}

	// --- people ------------------------------------------------------------------------------

	/** Starts a run, or answers the same run for the same start (`created: false`). */
	async start(input: StartInput): Promise<{ build: BuildView; created: boolean }> {
		const { build, created } = await startBuild(this.#core, input);
		return { build: await this.#core.view(build, input.by), created };
	}

	/** The document's runs not discarded, newest first, as `viewer` sees them. */
	async list(documentId: string, viewer: string): Promise<BuildView[]> {
		const builds = await listForDocument(this.#core.deps.store, documentId);
		return Promise.all(builds.map((b) => this.#core.view(b, viewer)));
	}

	/** A run (not discarded) as `viewer` sees it, or undefined. */
	async get(id: string, viewer?: string): Promise<{ build: Build; view: BuildView } | undefined> {
		const build = await getBuild(this.#core.deps.store, id);
		if (!build || build.discardedAt !== null) return undefined;
		return { build, view: await this.#core.view(build, viewer) };
	}

	async log(
		id: string,
		options: { after?: number; limit?: number },
	): Promise<{ lines: LogLine[]; more: boolean }> {
		const limit = Math.min(options.limit ?? LOG_PAGE_MAX, LOG_PAGE_MAX);
		return readLog(this.#core.deps.store, id, { ...options, limit });
	}

	async stop(id: string, by: string): Promise<BuildView> {
		return this.#core.view(await stopBuild(this.#core, id, by), by);
	}

	async resume(id: string, by: string): Promise<BuildView> {
		return this.#core.view(await resumeBuild(this.#core, id, by), by);
	}

	discard(id: string, by: string): Promise<void> {
		return discardRun(this.#core, id, by);
	}

	/** Whether the document has a run that is not final: it is busy (its Planner is not withdrawn as unused). */
	hasLive(documentId: string): Promise<boolean> {
		return hasLive(this.#core.deps.store, documentId);
	}

	/**
	 * The person's chosen machine for a document and its checkout's HEAD of the document's repository, so a
	 * start form can offer the base commit; null when they have no machine for it.
	 */
	async base(documentId: string, repository: string, login: string) {
		const machine = await this.#core.deps.machines.choose(login, documentId, repository);
		if (!machine) return { machine: null, head: null, runner: null };
		const wanted = repository.toLowerCase();
		const checkout = machine.checkouts.find(
			(c) => c.repository.toLowerCase() === wanted && /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(c.head ?? ""),
		);
		return {
			machine: { id: machine.id, label: machine.label, owner: machine.owner, online: machine.online },
			head: checkout?.head ?? null,
			runner: machine.runner,
		};
	}

	// --- the run's agent (/mcp) ------------------------------------------------------------------

	/**
	 * The run a `chopin_r_` credential belongs to, while it works: the run is live or ended less than 15
	 * minutes ago, is not discarded, and its machine is neither revoked nor waiting to be paired again.
	 */
	async verifyCredential(token: string): Promise<RunPrincipal | null> {
		if (!isRunCredential(token)) return null;
		const digest = runCredentialDigest(token);
		const build = await findByCredential(this.#core.deps.store, digest);
		if (!build?.credentialDigest || !sameDigest(build.credentialDigest, digest)) return null;
		if (build.discardedAt !== null) return null;
		if (build.credentialUntil !== null && this.#core.now() >= build.credentialUntil) return null;
		const machine = await this.#core.deps.machines.machine(build.machineId);
		if (!machine || machine.revoked) return null;
		return { build, machine };
	}

	async brief(buildId: string): Promise<BriefResult> {
		const build = await getBuild(this.#core.deps.store, buildId);
		if (!build) throw buildNotFound(buildId);
		const document = await this.#core.deps.documents.read(build.documentId);
		return briefResult(build, document, this.#core.deps.settings().publicUrl);
	}

	report(buildId: string, report: RunReport): Promise<Build> {
		return reportToRun(this.#core, buildId, report);
	}

	// --- machines (machine-builds.ts) --------------------------------------------------------------

	async machineReady(machineId: string, runs: RunState[]): Promise<void> {
		await machineHello(this.#core, machineId, runs);
		await sendHeld(this.#core, machineId, new Set(runs.map((r) => r.id)));
	}

	machineReported(machineId: string, runs: RunState[]): Promise<void> {
		return machineReport(this.#core, machineId, runs);
	}

	machineMessage(machineId: string, message: RunMessage): Promise<void> {
		return handleRunMessage(this.#core, machineId, message);
	}

	/** The machine came or went (or anything else changed): its runs are published when online changed. */
	machineChanged(machineId: string): void {
		this.#core.background(this.#machineChanged(machineId));
	}

	async #machineChanged(machineId: string): Promise<void> {
		const online = this.#core.deps.machines.online(machineId);
		if ((this.#online.get(machineId) ?? false) === online) return;
		this.#online.set(machineId, online);
		if (online) {
			this.#graceTimers.get(machineId)?.cancel();
			this.#graceTimers.delete(machineId);
		} else {
			await this.#armGrace(machineId);
		}
		await this.#core.publishMachine(machineId);
	}

	/** The machine was revoked, or must be paired again: the runs it held are lost. */
	machineRevoked(machineId: string): void {
		this.#core.background(
			(async () => {
				const machine = await this.#core.deps.machines.machine(machineId);
				await machineRevoked(this.#core, machineId, machine?.owner ?? "someone");
			})(),
		);
	}

	async #armGrace(machineId: string): Promise<void> {
		if (this.#core.stopped) return;
		const machine = await this.#core.deps.machines.machine(machineId);
		if (!machine || machine.online) return;
		const until = machine.lastContactAt + this.#core.deps.settings().offlineGraceMs;
		const wait = until - this.#core.now();
		if (wait <= 0) return;
		this.#graceTimers.get(machineId)?.cancel();
		this.#graceTimers.set(
			machineId,
			this.#core.deps.clock.setTimeout(() => {
				this.#graceTimers.delete(machineId);
				this.#core.background(this.#core.publishMachine(machineId));
			}, wait),
		);
	}
}
