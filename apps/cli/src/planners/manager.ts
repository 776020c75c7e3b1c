// The daemon's Planner backends: one supervisor per document, from the config's --planner documents and the
// server's assignments; a withdrawn assignment stops its backend, a machine refused for good stops them all.
import type { Assignment, PlannerState } from "@chopin/agent-link/machine";
import type { Logger } from "../local/log";
import type { Checkout, PlannerConfig } from "../machine/machine-config";
import type { CliError } from "../program/errors";
import type { PlannerDocument, PlannerEvent, PlannerSupervisor } from "./supervisor";

export interface ManagerOptions {
	planner: PlannerConfig;
	checkouts: readonly Checkout[];
	log: Logger;
	/** Makes (does not start) the supervisor for a document; its callbacks go to the manager's. */
	create(
		document: PlannerDocument,
		callbacks: { onMachineRefused(error: CliError): void },
	): PlannerSupervisor;
}

export class PlannerManager {
	readonly #o: ManagerOptions;
	/** Keyed by the document as given (--planner) or by its id (assigned). */
	readonly #supervisors = new Map<string, PlannerSupervisor>();
	#refused = false;

	constructor(options: ManagerOptions) {
		this.#o = options;
	}

	/** Starts the configured documents' backends. */
	start(): void {
		for (const { document, checkout } of this.#o.planner.documents) {
			const served = this.#o.checkouts.find((c) => c.path === checkout) ?? this.#o.checkouts[0];
			if (!served) {
				this.#o.log.warn({ document }, "a --planner document has no checkout to run in; skipping it");
				continue;
			}
			this.#add(document, {
				ref: document,
				checkout: served.path,
				repository: served.repository,
				source: "config",
			});
		}
	}

	/**
	 * The server's assignments, each time they change: new documents start (unless a configured
	 * one already runs them), withdrawn ones stop and their token files go.
	 */
	async assign(assignments: readonly Assignment[]): Promise<void> {
		if (this.#refused) return;
		const wanted = new Set(assignments.map((a) => a.document.id));
		for (const [key, supervisor] of [...this.#supervisors]) {
			if (supervisor.document.source !== "assigned" || wanted.has(key)) continue;
			this.#supervisors.delete(key);
			await supervisor.stop("the document was withdrawn from this machine");
		}
		for (const { document } of assignments) {
			if (this.#runs(document.id, document.url)) continue;
			const served = this.#o.checkouts.find((c) => c.repository === document.repository);
			this.#add(document.id, {
				ref: document.url,
				id: document.id,
				checkout: served?.path,
				repository: document.repository,
				source: "assigned",
			});
		}
	}

	/** Every backend whose document and worktree are known, as hello and report carry them. */
	states(): PlannerState[] {
		const out = new Map<string, PlannerState>();
		for (const supervisor of this.#supervisors.values()) {
			const snap = supervisor.snapshot();
			if (snap && !out.has(snap.document)) out.set(snap.document, snap);
		}
		return [...out.values()];
	}

	/** Every supervisor, in the order they were made. */
	supervisors(): PlannerSupervisor[] {
		return [...this.#supervisors.values()];
	}

	/** Stops every backend and deletes its token files; `refused` when Chopin refused the machine for good. */
	async stopAll(reason: string, event: PlannerEvent = "stopped"): Promise<void> {
		if (event === "refused") this.#refused = true;
		await Promise.all([...this.#supervisors.values()].map((s) => s.stop(reason, event)));
	}

	/** Whether a backend already runs the document: by its id, or (before its first credential) by its URL. */
	#runs(id: string, url: string): boolean {
		for (const supervisor of this.#supervisors.values()) {
			if (supervisor.id === id || supervisor.document.ref === url) return true;
		}
		return false;
	}

	#add(key: string, document: PlannerDocument): void {
		if (this.#supervisors.has(key)) return;
		const supervisor = this.#o.create(document, {
			onMachineRefused: (error) => {
				if (this.#refused) return;
				this.#o.log.error({ code: error.code }, `stopping every Planner backend: ${error.message}`);
				void this.stopAll(error.message, "refused");
			},
		});
		this.#supervisors.set(key, supervisor);
		void supervisor.start();
	}
}

/** A planner-event's reason, as the control channel carries it. */
export function eventMessage(document: string, event: PlannerEvent, reason?: string) {
	return {
		type: "planner-event" as const,
		document,
		event,
		...(reason ? { reason: reason.slice(0, 4000) } : {}),
	};
}
