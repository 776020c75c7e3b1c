// Which machine runs a document for a person: their override for the document, their pin for the repository,
// the machine that last ran work for it, then their most recently active idle one. Only their own machines count.
import { z } from "zod";
import type { Db } from "../store/store";
import { listByOwner, type Machine } from "./machine-rows";

export const CHOICE_RULES = ["override", "pin", "last-work", "recent"] as const;
export type ChoiceRule = (typeof CHOICE_RULES)[number];

export interface Choice {
	machine: Machine;
	rule: ChoiceRule;
}

export interface ChoiceInput {
	/** Whose machines are eligible: the person the document is used for. */
	login: string;
	documentId: string;
	/** The document's repository, owner/name. */
	repository: string;
}

/** A machine that may run anything: claimed, not revoked, its authorization alive. */
function usable(machine: Machine | undefined, login: string): machine is Machine {
	return (
		machine?.claimed === true &&
		machine.revokedAt === null &&
		!machine.reauthorize &&
		machine.owner.toLowerCase() === login.toLowerCase()
	);
}

/** Idle: no build or run it reported is running or paused. */
export function isIdle(machine: Machine): boolean {
	return !machine.runs.some(
		(r) => r.status === "preparing" || r.status === "running" || r.status === "paused",
	);
}

/**
 * The person's choice for the document. An explicit override or pin is returned even when its
 * machine is offline (the caller says so rather than using another behind their back); the
 * implicit rules only consider machines that are online, since an offline one can run nothing.
 */
export async function chooseMachine(
	db: Db,
	input: ChoiceInput,
	online: (machineId: string) => boolean,
): Promise<Choice | undefined> {
	const machines = await listByOwner(db, input.login);
	const byId = new Map(machines.map((m) => [m.id, m]));
	const override = await db.one(
		db.sql`SELECT machine_id FROM machine_document_overrides WHERE login = ${input.login} AND document_id = ${input.documentId}`,
	);
	const overridden = byId.get(String(override?.machine_id ?? ""));
	if (usable(overridden, input.login)) return { machine: overridden, rule: "override" };
	const pin = await db.one(
		db.sql`SELECT machine_id FROM machine_repository_pins WHERE login = ${input.login} AND repository = ${input.repository.toLowerCase()}`,
	);
	const pinned = byId.get(String(pin?.machine_id ?? ""));
	if (usable(pinned, input.login)) return { machine: pinned, rule: "pin" };
	const worked = await db.many(
		db.sql`SELECT machine_id FROM machine_document_work WHERE document_id = ${input.documentId} ORDER BY at DESC`,
		z.object({ machine_id: z.string() }),
	);
	for (const { machine_id } of worked) {
		const machine = byId.get(machine_id);
		if (usable(machine, input.login) && online(machine.id)) return { machine, rule: "last-work" };
	}
	const repository = input.repository.toLowerCase();
	const candidates = machines.filter((m) => usable(m, input.login) && online(m.id));
	const rank = (m: Machine) =>
		(isIdle(m) ? 0 : 2) + (m.repositories.some((r) => r.toLowerCase() === repository) ? 0 : 1);
	// listByOwner is most recently heard from first; a stable sort keeps that order within a rank.
	const best = candidates.sort((a, b) => rank(a) - rank(b))[0];
	return best && { machine: best, rule: "recent" };
}

/** A person's pin of one of their machines to a repository (null removes it). */
export async function setRepositoryPin(
	db: Db,
	login: string,
	repository: string,
	machineId: string | null,
	now: number,
): Promise<void> {
	const repo = repository.toLowerCase();
	if (machineId === null) {
		await db.sql`DELETE FROM machine_repository_pins WHERE login = ${login} AND repository = ${repo}`;
		return;
	}
	await db.sql`INSERT INTO machine_repository_pins ${db.sql({ login, repository: repo, machine_id: machineId, updated_at: now })}
		ON CONFLICT (login, repository) DO UPDATE SET machine_id = excluded.machine_id, updated_at = excluded.updated_at`;
}

/** A person's override of the machine for one document (null removes it). */
export async function setDocumentOverride(
	db: Db,
	login: string,
	documentId: string,
	machineId: string | null,
	now: number,
): Promise<void> {
	if (machineId === null) {
		await db.sql`DELETE FROM machine_document_overrides WHERE login = ${login} AND document_id = ${documentId}`;
		return;
	}
	await db.sql`INSERT INTO machine_document_overrides ${db.sql({ login, document_id: documentId, machine_id: machineId, updated_at: now })}
		ON CONFLICT (login, document_id) DO UPDATE SET machine_id = excluded.machine_id, updated_at = excluded.updated_at`;
}

/** The person's pin and override that bear on a document, for the pages. */
export async function choicesFor(
	db: Db,
	login: string,
	documentId: string,
	repository: string,
): Promise<{ override: string | null; pin: string | null }> {
	const override = await db.one(
		db.sql`SELECT machine_id FROM machine_document_overrides WHERE login = ${login} AND document_id = ${documentId}`,
	);
	const pin = await db.one(
		db.sql`SELECT machine_id FROM machine_repository_pins WHERE login = ${login} AND repository = ${repository.toLowerCase()}`,
	);
	return {
		override: override ? String(override.machine_id) : null,
		pin: pin ? String(pin.machine_id) : null,
	};
}

/** Notes that a machine ran work for a document (a Planner running, a run of the document). */
export async function recordWork(db: Db, documentId: string, machineId: string, now: number): Promise<void> {
	await db.sql`INSERT INTO machine_document_work ${db.sql({ document_id: documentId, machine_id: machineId, at: now })}
		ON CONFLICT (document_id, machine_id) DO UPDATE SET at = excluded.at`;
}
