// A document used with no Planner attached gets one on the chosen machine (requestPlanner); choices people make move
// it; what each machine says of its Planners is kept for the agent endpoint's "can't connect" messages.
import type { Clock } from "@chopin/agent-link/clock";
import type { MachineClientMessage } from "@chopin/agent-link/machine";
import { z } from "zod";
import type { DocumentService } from "../documents/service";
import type { Logger } from "../log";
import type { Store } from "../store/store";
import type { Assignments } from "./assignments";
import { type ChoiceRule, chooseMachine, recordWork, setDocumentOverride, setRepositoryPin } from "./choice";
import { machineNotFound } from "./errors";
import { getMachine, type MachineState } from "./machine-rows";

type PlannerEvent = Extract<MachineClientMessage, { type: "planner-event" }>;

/** What requestPlanner did: asked an online machine, found the chosen one offline, or found none. */
export type PlannerRequest =
	| {
			status: "assigned";
			machineId: string;
			/** The machine's owner: whom messages name ("@login's machine"). */
			login: string;
			label: string;
			rule: ChoiceRule;
			/** It was already asked for this document. */
			already: boolean;
	  }
	| { status: "offline"; machineId: string; login: string; label: string; rule: ChoiceRule }
	| { status: "none"; reason: "no-machine" | "no-document" };

/** What a machine last said of a document's Planner backend. */
export interface PlannerActivity {
	machineId: string;
	login: string;
	event: PlannerEvent["event"];
	reason?: string;
	at: number;
	/** Exits and refusals in a row since the backend last attached or the document was assigned. */
	exitsInRow: number;
}

export interface PlannerUsageDeps {
	store: Store;
	clock: Clock;
	log: Logger;
	documents: DocumentService;
	assignments: Assignments;
	online(machineId: string): boolean;
}

export class PlannerUsage {
	readonly #deps: PlannerUsageDeps;
	readonly #busyChecks = new Set<(documentId: string) => boolean | Promise<boolean>>();
	readonly #activity = new Map<string, PlannerActivity>();

	constructor(deps: PlannerUsageDeps) {
		this.#deps = deps;
	}

	/**
	 * A document is used and no Planner is attached: choose a machine for `by` (default: the
	 * document's creator) and, when it is online, add the document to its `planners` set (moving
	 * it from any other machine). Only `by`'s own machines are eligible.
	 */
	async request(documentId: string, options: { by?: string } = {}): Promise<PlannerRequest> {
		const { store, documents, assignments, online } = this.#deps;
		const document = await documents.find(documentId);
		if (!document || document.archived) return { status: "none", reason: "no-document" };
		const by = options.by ?? document.createdBy;
		assignments.markUsed(documentId);
		const choice = await chooseMachine(
			store,
			{ login: by, documentId, repository: document.repository },
			online,
		);
		if (!choice) return { status: "none", reason: "no-machine" };
		const { machine, rule } = choice;
		const about = { machineId: machine.id, login: machine.owner, label: machine.label, rule };
		if (!online(machine.id)) return { status: "offline", ...about };
		const changed = await assignments.assign(documentId, machine.id, by);
		if (changed) this.#activity.delete(documentId);
		return { status: "assigned", ...about, already: !changed };
	}

	addBusyCheck(check: (documentId: string) => boolean | Promise<boolean>): () => void {
		this.#busyChecks.add(check);
		return () => this.#busyChecks.delete(check);
	}

	/** In use: an open question, a live run card, or what a registered check says (a reply in progress). */
	async isBusy(documentId: string): Promise<boolean> {
		for (const check of this.#busyChecks) if (await check(documentId)) return true;
		const { store } = this.#deps;
		const busy = await store.one(
			store.sql`SELECT
				(SELECT count(*) FROM decisions WHERE document_id = ${documentId} AND status = 'open') AS questions,
				(SELECT count(*) FROM run_cards WHERE document_id = ${documentId} AND status IN ('running', 'waiting', 'paused')) AS runs`,
			z.object({ questions: z.coerce.number(), runs: z.coerce.number() }),
		);
		return (busy?.questions ?? 0) > 0 || (busy?.runs ?? 0) > 0;
	}

	noteEvent(machineId: string, login: string, event: PlannerEvent): void {
		const previous = this.#activity.get(event.document);
		const same = previous?.machineId === machineId;
		const failed = event.event === "exited" || event.event === "refused";
		this.#activity.set(event.document, {
			machineId,
			login,
			event: event.event,
			...(event.reason !== undefined && { reason: event.reason }),
			at: this.#deps.clock.now(),
			exitsInRow: (same ? (previous?.exitsInRow ?? 0) : 0) + (failed ? 1 : 0),
		});
	}

	/** What the document's machine last said of its Planner backend, if anything. */
	activity(documentId: string): PlannerActivity | undefined {
		return this.#activity.get(documentId);
	}

	/** The document's Planner attached: its exits in a row start again from none. */
	attached(documentId: string): void {
		const current = this.#activity.get(documentId);
		if (current) current.exitsInRow = 0;
	}

	/** Notes the documents a reported state shows the machine working on, for "last ran work". */
	async noteWork(machineId: string, state: MachineState): Promise<void> {
		const ids = new Set<string>();
		for (const p of state.planners) if (p.state === "running") ids.add(p.document);
		for (const r of state.runs)
			if (r.document && r.status !== "finished" && r.status !== "failed" && r.status !== "stopped")
				ids.add(r.document);
		if (ids.size === 0) return;
		const { store, clock } = this.#deps;
		// Only documents that exist: a machine may name one deleted meanwhile (or one it made up).
		const known = await store.many(store.sql`SELECT id FROM documents WHERE id IN ${store.sql([...ids])}`);
		const now = clock.now();
		for (const row of known) await recordWork(store, String(row.id), machineId, now);
	}

	/**
	 * A person chooses one of their machines for a document (null: no override). Assignments made
	 * by their choice follow at once.
	 */
	async setOverride(login: string, documentId: string, machineId: string | null): Promise<void> {
		const { store, clock } = this.#deps;
		if (machineId !== null) await this.#requireOwn(login, machineId);
		await setDocumentOverride(store, login, documentId, machineId, clock.now());
		await this.#follow(login, (d) => d.documentId === documentId);
	}

	/** A person pins one of their machines to a repository (null: no pin). */
	async setPin(login: string, repository: string, machineId: string | null): Promise<void> {
		const { store, clock, documents } = this.#deps;
		if (machineId !== null) await this.#requireOwn(login, machineId);
		await setRepositoryPin(store, login, repository, machineId, clock.now());
		const inRepository = new Set((await documents.listByRepository(repository)).map((d) => d.id));
		await this.#follow(login, (d) => inRepository.has(d.documentId));
	}

	async #requireOwn(login: string, machineId: string): Promise<void> {
		const machine = await getMachine(this.#deps.store, machineId);
		const own =
			machine?.claimed && machine.revokedAt === null && machine.owner.toLowerCase() === login.toLowerCase();
		if (!own) throw machineNotFound();
	}

	/**
	 * A new choice moves what it governs: an assignment of the person's choosing whose choice is
	 * now another machine leaves its machine, and goes to the new one when that one is online.
	 */
	async #follow(login: string, governs: (a: { documentId: string }) => boolean): Promise<void> {
		const { store, documents, assignments, online } = this.#deps;
		for (const current of await assignments.chosenBy(login)) {
			if (!governs(current)) continue;
			const document = await documents.find(current.documentId);
			if (!document) continue;
			const choice = await chooseMachine(
				store,
				{ login, documentId: current.documentId, repository: document.repository },
				online,
			);
			if (choice?.machine.id === current.machineId) continue;
			if (choice && online(choice.machine.id)) {
				await assignments.assign(current.documentId, choice.machine.id, login);
			} else {
				await assignments.withdraw(current.documentId, "moved");
			}
			this.#activity.delete(current.documentId);
		}
	}
}
