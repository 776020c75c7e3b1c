// The planner_link_holds rows (spec: After a server restart): what a resumable Planner link kept, written when it
// drops with work kept and for every live link at a graceful stop's cut, read back by the next process.
import { z } from "zod";
import { dbJson } from "../store/codecs";
import type { Store } from "../store/store";

const owedStopSchema = z.strictObject({
	session: z.string(),
	by: z.string(),
	all: z.boolean(),
	runs: z.array(z.string()),
});

export const holdSchema = z.strictObject({
	sessions: z.array(
		z.strictObject({
			session: z.string(),
			/** Whether its last runs report listed live or paused runs. */
			runs: z.boolean(),
			/** Each question it asked, open or answered and not acknowledged, with its Decision. */
			requests: z.array(
				z.strictObject({
					request: z.string(),
					decisionId: z.string(),
					rootRunId: z.string().optional(),
				}),
			),
		}),
	),
	/** Stops the client has not answered. */
	stops: z.array(owedStopSchema),
});
export type Hold = z.infer<typeof holdSchema>;

export interface HoldRecord {
	documentId: string;
	login: string;
	kind: "account" | "machine";
	machineId?: string;
	signInSessionId?: string;
	hold: Hold;
	/** Written at a graceful stop's cut: the next process gives it the hand-over window. */
	handover: boolean;
}

const rowSchema = z.object({
	document_id: z.string(),
	login: z.string(),
	kind: z.enum(["account", "machine"]),
	machine_id: z.string().nullable(),
	sign_in_session_id: z.string().nullable(),
	hold: dbJson(holdSchema),
	handover: z.coerce.number(),
});

export class HoldsStore {
	constructor(
		private readonly store: Store,
		private readonly now: () => number,
	) {}

	/** Writes the document's row whole (one per document). */
	async write(record: HoldRecord): Promise<void> {
		const { store } = this;
		const row = {
			document_id: record.documentId,
			login: record.login,
			kind: record.kind,
			machine_id: record.machineId ?? null,
			sign_in_session_id: record.signInSessionId ?? null,
			hold: JSON.stringify(record.hold),
			handover: record.handover ? 1 : 0,
			updated_at: this.now(),
		};
		await store.sql`INSERT INTO planner_link_holds ${store.sql(row)} ON CONFLICT (document_id) DO UPDATE SET
			login = excluded.login, kind = excluded.kind, machine_id = excluded.machine_id,
			sign_in_session_id = excluded.sign_in_session_id, hold = excluded.hold, handover = excluded.handover,
			updated_at = excluded.updated_at`;
	}

	async remove(documentId: string): Promise<void> {
		await this.store.sql`DELETE FROM planner_link_holds WHERE document_id = ${documentId}`;
	}

	/** Every row; one that no longer parses is logged by the caller's catch and skipped. */
	async all(): Promise<HoldRecord[]> {
		const { store } = this;
		const rows = await store.many(store.sql`SELECT * FROM planner_link_holds ORDER BY document_id`);
		const records: HoldRecord[] = [];
		for (const raw of rows) {
			const parsed = rowSchema.safeParse(raw);
			if (!parsed.success) continue;
			const row = parsed.data;
			records.push({
				documentId: row.document_id,
				login: row.login,
				kind: row.kind,
				...(row.machine_id !== null && { machineId: row.machine_id }),
				...(row.sign_in_session_id !== null && { signInSessionId: row.sign_in_session_id }),
				hold: row.hold,
				handover: row.handover === 1,
			});
		}
		return records;
	}
}
