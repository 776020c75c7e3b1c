// Planner credentials (chopin_p_): issued to a machine for one document for 15 minutes, kept only as digests in planner_credentials.
import type { Clock } from "@chopin/agent-link/clock";
import { z } from "zod";
import type { StoredAuthorization } from "../auth/authorization";
import { dbBoolean } from "../store/codecs";
import type { Store } from "../store/store";
import { joinedAuthorization, joinedAuthorizationColumns, joinedAuthorizationSchema } from "./authorizations";
import type { CredentialCache } from "./credential-cache";
import { credentialDigest, isPlannerCredential, newPlannerCredential, sameDigest } from "./credentials";

/** How long a Planner credential opens connections for its document. */
export const PLANNER_CREDENTIAL_TTL_MS = 15 * 60_000;

const lookupRowSchema = z
	.object({
		digest: z.string(),
		machine_id: z.string(),
		document_id: z.string(),
		expires_at: z.number(),
		owner: z.string(),
		revoked_at: z.number().nullable(),
		reauthorize: dbBoolean,
	})
	.extend(joinedAuthorizationSchema.shape);

/** An unexpired credential's row, with what its machine's state says about it. */
export interface PlannerCredentialRow {
	machineId: string;
	documentId: string;
	expiresAt: number;
	owner: string;
	/** The machine was revoked, or must be paired again: the credential then opens nothing. */
	machineUsable: boolean;
}

export class PlannerCredentials {
	constructor(
		private readonly deps: {
			store: Store;
			clock: Clock;
			/** Shared with MachineAuth and the revocations that invalidate it (credential-cache.ts). */
			cache: CredentialCache;
		},
	) {}

	/** A new credential for the document; its digest is written before it is returned. */
	async issue(machineId: string, documentId: string): Promise<{ token: string; expiresAt: number }> {
		const { store, clock } = this.deps;
		const token = newPlannerCredential();
		const now = clock.now();
		const expiresAt = now + PLANNER_CREDENTIAL_TTL_MS;
		await store.sql`INSERT INTO planner_credentials ${store.sql({
			digest: credentialDigest(token),
			machine_id: machineId,
			document_id: documentId,
			expires_at: expiresAt,
			created_at: now,
		})}`;
		return { token, expiresAt };
	}

	/** The credential's row when it is one and has not expired; undefined otherwise. */
	async lookup(token: string): Promise<PlannerCredentialRow | undefined> {
		return (await this.read(token))?.row;
	}

	/**
	 * lookup(), and when it asked the store, the machine's stored authorization read in the same query
	 * (`authorization`; its `stored` is undefined when the machine holds none): a credential's first check
	 * is then one round trip, not a second one to restore the authorization (MachineAuthorizations.get).
	 * The sealed tokens are handed on, never kept with the cached answer.
	 */
	async read(
		token: string,
	): Promise<
		{ row: PlannerCredentialRow; authorization?: { stored: StoredAuthorization | undefined } } | undefined
	> {
		if (!isPlannerCredential(token)) return undefined;
		const { store, clock, cache } = this.deps;
		const digest = credentialDigest(token);
		let authorization: { stored: StoredAuthorization | undefined } | undefined;
		const found = await cache.read<PlannerCredentialRow>(digest, async () => {
			// Every join is on a primary key (planner_credentials.digest, machines.id, machine_authorizations.machine_id).
			const row = await store.one(
				store.sql`SELECT c.digest, c.machine_id, c.document_id, c.expires_at, m.owner, m.revoked_at, m.reauthorize,
					${joinedAuthorizationColumns(store)}
					FROM planner_credentials c JOIN machines m ON m.id = c.machine_id
					LEFT JOIN machine_authorizations a ON a.machine_id = c.machine_id
					WHERE c.digest = ${digest} AND c.expires_at > ${clock.now()}`,
				lookupRowSchema,
			);
			if (!row || !sameDigest(row.digest, digest)) return undefined;
			authorization = { stored: joinedAuthorization(row) };
			const value: PlannerCredentialRow = {
				machineId: row.machine_id,
				documentId: row.document_id,
				expiresAt: row.expires_at,
				owner: row.owner,
				machineUsable: row.revoked_at === null && !row.reauthorize,
			};
			// Only a usable one is kept: a revoked machine's credential asks the store each time.
			return {
				value,
				scope: { machineId: value.machineId, documentId: value.documentId },
				keep: value.machineUsable,
			};
		});
		// A kept credential expires as its row would: refused from its expiry on.
		if (!found || found.expiresAt <= clock.now()) return undefined;
		return { row: found, authorization };
	}

	/** Deletes a machine's credentials (for one document, or all of them). */
	async deleteForMachine(machineId: string, documentId?: string): Promise<number> {
		const { store, cache } = this.deps;
		const rows = await cache.change({ machineId, documentId }, () =>
			documentId === undefined
				? store.many(
						store.sql`DELETE FROM planner_credentials WHERE machine_id = ${machineId} RETURNING digest`,
					)
				: store.many(
						store.sql`DELETE FROM planner_credentials WHERE machine_id = ${machineId} AND document_id = ${documentId}
							RETURNING digest`,
					),
		);
		return rows.length;
	}

	async deleteForDocument(documentId: string): Promise<number> {
		const { store, cache } = this.deps;
		const rows = await cache.change({ documentId }, () =>
			store.many(
				store.sql`DELETE FROM planner_credentials WHERE document_id = ${documentId} RETURNING digest`,
			),
		);
		return rows.length;
	}

	/** Deletes the rows of expired credentials; they are refused anyway once expired. */
	async sweep(): Promise<number> {
		const { store, clock, cache } = this.deps;
		const now = clock.now();
		const rows = await store.many(
			store.sql`DELETE FROM planner_credentials WHERE expires_at <= ${now} RETURNING digest`,
		);
		cache.dropWhere((value) => {
			const expiresAt = (value as Partial<PlannerCredentialRow>).expiresAt;
			return expiresAt !== undefined && expiresAt <= now;
		});
		return rows.length;
	}
}
