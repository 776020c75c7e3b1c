// What the Machines page and the document's machine line read beside the machine views: the person's pins, the
// titles of the documents their machines name, and whose machine runs a document's Planner.
import { z } from "zod";
import { permits } from "../auth/authorization";
import type { SignedInUser } from "../auth/guards";
import type { AppContext } from "../context";
import type { Db } from "../store/store";
import { getMachine } from "./machine-rows";
import { type MachineView, machineViewSchema } from "./machine-view";

export const machinePinSchema = z.strictObject({
	/** owner/name, lower-cased as pins are stored (names compare without case). */
	repository: z.string(),
	machine: z.string(),
});
export type MachinePin = z.infer<typeof machinePinSchema>;

export const namedDocumentSchema = z.strictObject({ title: z.string(), repository: z.string() });
export type NamedDocument = z.infer<typeof namedDocumentSchema>;

/** GET /api/machines: the person's machines, their pins, and the documents the machines name that they can read. */
export const machinesPageSchema = z.strictObject({
	machines: z.array(machineViewSchema),
	pins: z.array(machinePinSchema),
	documents: z.record(z.string(), namedDocumentSchema),
});
export type MachinesPage = z.infer<typeof machinesPageSchema>;

/** Where a document is assigned: the machine, whether it is online, its owner, and its label when it is the reader's own. */
export const assignedMachineSchema = z.strictObject({
	machine: z.string(),
	online: z.boolean(),
	owner: z.string(),
	/** Only for the reader's own machine: another person's machine is "@owner's machine". */
	label: z.string().optional(),
});
export type AssignedMachine = z.infer<typeof assignedMachineSchema>;

/** GET /api/documents/:id/machine: the person's override and pin that bear on the document, and where it is assigned. */
export const documentMachineSchema = z.strictObject({
	document: z.string(),
	override: z.string().nullable(),
	pin: z.string().nullable(),
	assigned: assignedMachineSchema.nullable(),
});
export type DocumentMachine = z.infer<typeof documentMachineSchema>;

/** Every pin the person holds, by repository. */
export async function pinsOf(db: Db, login: string): Promise<MachinePin[]> {
	const rows = await db.many(
		db.sql`SELECT repository, machine_id FROM machine_repository_pins WHERE login = ${login} ORDER BY repository`,
		z.object({ repository: z.string(), machine_id: z.string() }),
	);
	return rows.map((r) => ({ repository: r.repository, machine: r.machine_id }));
}

/**
 * The title and repository of each document the machines name (Planners, runs, assignments), for the
 * ones the person can still read; the others stay ids, so a title never shows to someone without access.
 */
export async function namedDocuments(
	ctx: AppContext,
	user: SignedInUser,
	machines: readonly MachineView[],
): Promise<Record<string, NamedDocument>> {
	const ids = new Set<string>();
	for (const m of machines) {
		for (const p of m.planners) ids.add(p.document);
		for (const r of m.runs) if (r.document) ids.add(r.document);
		for (const d of m.assigned) ids.add(d);
	}
	const readable = new Map<string, Promise<boolean>>();
	const canRead = (repository: string) => {
		const key = repository.toLowerCase();
		let known = readable.get(key);
		if (!known) {
			known = ctx.identity.permission(user.authorization, repository).then(
				(p) => permits(p, "read"),
				// GitHub could not say: show the id rather than fail the whole page.
				() => false,
			);
			readable.set(key, known);
		}
		return known;
	};
	const out: Record<string, NamedDocument> = {};
	for (const id of ids) {
		const document = await ctx.domain.documents.find(id);
		if (document && (await canRead(document.repository)))
			out[id] = { title: document.title, repository: document.repository };
	}
	return out;
}

/** The machine a document is assigned to, as a reader of the document may see it. */
export async function assignedMachine(
	ctx: AppContext,
	login: string,
	documentId: string,
): Promise<AssignedMachine | null> {
	const assigned = await ctx.machines.assignments.of(documentId);
	if (!assigned) return null;
	const machine = await getMachine(ctx.store, assigned.machineId);
	if (!machine) return null;
	const own = machine.owner.toLowerCase() === login.toLowerCase();
	return {
		machine: machine.id,
		online: ctx.machines.control.isOnline(machine.id),
		owner: machine.owner,
		...(own && { label: machine.label }),
	};
}
