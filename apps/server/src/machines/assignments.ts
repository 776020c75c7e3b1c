// The documents each machine is asked to run a Planner for (its `planners` set): assigned when a document is used,
// moved by a new choice, withdrawn after 30 minutes unused; stored, so a restart asks the same machines again.
import type { Clock } from "@chopin/agent-link/clock";
import type { Assignment } from "@chopin/agent-link/machine";
import { z } from "zod";
import type { Logger } from "../log";
import type { Store } from "../store/store";

/** A document unused this long (and not busy) is withdrawn from its machine. */
export const UNUSED_AFTER_MS = 30 * 60_000;

export const WITHDRAW_REASONS = ["moved", "unused", "revoked", "archived", "deleted", "access-lost"] as const;
export type WithdrawReason = (typeof WITHDRAW_REASONS)[number];

/** A document stopped being asked of a machine; the agent endpoint ends a link it holds (access-revoked). */
export interface Withdrawal {
	documentId: string;
	machineId: string;
	reason: WithdrawReason;
}

const assignedRowSchema = z.object({
	document_id: z.string(),
	machine_id: z.string(),
	chosen_by: z.string(),
	title: z.string(),
	repository: z.string(),
});

export interface AssignmentsDeps {
	store: Store;
	clock: Clock;
	log: Logger;
	publicUrl(): string;
	/** The machine's set changed: send it `planners` when it is connected. */
	changed(machineId: string): void;
	withdrawn(withdrawal: Withdrawal): void;
	/**
	 * True while the document is in use (a reply in progress, an open question, a live run), so
	 * it is not withdrawn however long since it was last used.
	 */
	isBusy(documentId: string): Promise<boolean>;
}

export class Assignments {
	readonly #deps: AssignmentsDeps;
	/** When each document was last used on this process; a document assigned before a restart counts from the restart. */
	readonly #lastUsed = new Map<string, number>();

	constructor(deps: AssignmentsDeps) {
		this.#deps = deps;
	}

	/** The machine's `planners` set, as the control channel sends it. */
	async forMachine(machineId: string): Promise<Assignment[]> {
		const { store } = this.#deps;
		const rows = await store.many(
			store.sql`SELECT a.document_id, a.machine_id, a.chosen_by, d.title, d.repository
				FROM machine_assignments a JOIN documents d ON d.id = a.document_id
				WHERE a.machine_id = ${machineId} AND d.deleted = 0 AND d.archived = 0
				ORDER BY a.assigned_at, a.document_id`,
			assignedRowSchema,
		);
		const origin = this.#deps.publicUrl();
		return rows.map((r) => ({
			document: {
				id: r.document_id,
				url: `${origin}/d/${r.document_id}`,
				title: r.title,
				repository: r.repository,
			},
		}));
	}

	/** The machine the document is assigned to, and whose choice it was. */
	async of(documentId: string): Promise<{ machineId: string; chosenBy: string } | undefined> {
		const { store } = this.#deps;
		const row = await store.one(
			store.sql`SELECT machine_id, chosen_by FROM machine_assignments WHERE document_id = ${documentId}`,
		);
		return row && { machineId: String(row.machine_id), chosenBy: String(row.chosen_by) };
	}

	/** The documents assigned to machines of someone's choice (to apply a new choice to). */
	async chosenBy(login: string): Promise<{ documentId: string; machineId: string }[]> {
		const { store } = this.#deps;
		const rows = await store.many(
			store.sql`SELECT document_id, machine_id FROM machine_assignments WHERE chosen_by = ${login}`,
		);
		return rows.map((r) => ({ documentId: String(r.document_id), machineId: String(r.machine_id) }));
	}

	/**
	 * Asks the machine to run the document's Planner. A document assigned to another machine is
	 * withdrawn from it first (moved). True when the set changed.
	 */
	async assign(documentId: string, machineId: string, chosenBy: string): Promise<boolean> {
		const { store, clock } = this.#deps;
		const now = clock.now();
		this.#lastUsed.set(documentId, now);
		const previous = await this.of(documentId);
		if (previous?.machineId === machineId) {
			if (previous.chosenBy !== chosenBy) {
				await store.sql`UPDATE machine_assignments SET chosen_by = ${chosenBy} WHERE document_id = ${documentId}`;
			}
			return false;
		}
		await store.sql`INSERT INTO machine_assignments ${store.sql({
			machine_id: machineId,
			document_id: documentId,
			chosen_by: chosenBy,
			assigned_at: now,
		})} ON CONFLICT (document_id) DO UPDATE SET machine_id = excluded.machine_id, chosen_by = excluded.chosen_by,
			assigned_at = excluded.assigned_at`;
		this.#deps.log.info("planner assigned", { document: documentId, machine: machineId, chosenBy });
		if (previous) this.#after({ documentId, machineId: previous.machineId, reason: "moved" });
		this.#deps.changed(machineId);
		return true;
	}

	/** Stops asking for the document's Planner (from whichever machine has it). */
	async withdraw(documentId: string, reason: WithdrawReason): Promise<Withdrawal | undefined> {
		const { store } = this.#deps;
		const row = await store.one(
			store.sql`DELETE FROM machine_assignments WHERE document_id = ${documentId} RETURNING machine_id`,
		);
		this.#lastUsed.delete(documentId);
		if (!row) return undefined;
		const withdrawal = { documentId, machineId: String(row.machine_id), reason };
		this.#deps.log.info("planner withdrawn", withdrawal);
		this.#after(withdrawal);
		return withdrawal;
	}

	/** Stops asking a machine for anything (it was revoked or lost its authorization). */
	async withdrawMachine(machineId: string, reason: WithdrawReason): Promise<Withdrawal[]> {
		const { store } = this.#deps;
		const rows = await store.many(
			store.sql`DELETE FROM machine_assignments WHERE machine_id = ${machineId} RETURNING document_id`,
		);
		const out = rows.map((r) => ({ documentId: String(r.document_id), machineId, reason }));
		for (const w of out) {
			this.#lastUsed.delete(w.documentId);
			this.#deps.withdrawn(w);
		}
		if (out.length) this.#deps.changed(machineId);
		return out;
	}

	/** The document was used (a message, a turn, an answer): its 30 minutes start again. */
	markUsed(documentId: string): void {
		this.#lastUsed.set(documentId, this.#deps.clock.now());
	}

	/** Withdraws every document unused for 30 minutes that is not busy. Returns what went. */
	async sweepUnused(): Promise<Withdrawal[]> {
		const { store, clock } = this.#deps;
		const now = clock.now();
		const rows = await store.many(store.sql`SELECT document_id FROM machine_assignments`);
		const out: Withdrawal[] = [];
		for (const row of rows) {
			const documentId = String(row.document_id);
			const last = this.#lastUsed.get(documentId);
			if (last === undefined) {
				// Assigned before this process started: its 30 minutes count from now.
				this.#lastUsed.set(documentId, now);
				continue;
			}
			if (now - last < UNUSED_AFTER_MS) continue;
			if (await this.#deps.isBusy(documentId)) {
				this.#lastUsed.set(documentId, now);
				continue;
			}
			const w = await this.withdraw(documentId, "unused");
			if (w) out.push(w);
		}
		return out;
	}

	#after(withdrawal: Withdrawal): void {
		this.#deps.withdrawn(withdrawal);
		this.#deps.changed(withdrawal.machineId);
	}
}
