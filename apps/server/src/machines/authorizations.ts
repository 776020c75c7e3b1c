// The authorization each machine holds (the confirming person's, sealed at rest), restored once per process and renewed by identity.
import type { Clock } from "@chopin/agent-link/clock";
import { z } from "zod";
import type { Authorization, StoredAuthorization } from "../auth/authorization";
import { IdentityError, isIdentityError } from "../auth/errors";
import type { Identity } from "../auth/identity";
import type { Logger } from "../log";
import type { Db, Store } from "../store/store";

const bytes = z.custom<Uint8Array>((v) => v instanceof Uint8Array);

const authorizationRowSchema = z.object({
	kind: z.enum(["github", "local"]),
	login: z.string(),
	github_id: z.number().nullable(),
	access_token_enc: bytes.nullable(),
	refresh_token_enc: bytes.nullable(),
	expires_at: z.number().nullable(),
	refresh_expires_at: z.number().nullable(),
});
type AuthorizationRow = z.infer<typeof authorizationRowSchema>;

/** What the sealed tokens of a machine are bound to: they open for this machine's row only. */
export function machineBinding(machineId: string): string {
	return `machine:${machineId}`;
}

export interface MachineAuthorizationsDeps {
	store: Store;
	identity: Identity;
	clock: Clock;
	log: Logger;
	/** The machine's authorization ended for good (revoked at GitHub, refresh token dead, account gone). */
	onEnded(machineId: string): void;
}

export class MachineAuthorizations {
	readonly #deps: MachineAuthorizationsDeps;
	readonly #cache = new Map<string, Promise<Authorization>>();

	constructor(deps: MachineAuthorizationsDeps) {
		this.#deps = deps;
	}

	/** Seals an authorization for a machine (outside any transaction: sealing is not a query). */
	seal(machineId: string, authorization: Authorization): Promise<StoredAuthorization> {
		return this.#deps.identity.store(authorization, machineBinding(machineId));
	}

	/** Writes the sealed authorization as the machine's row. */
	async insert(db: Db, machineId: string, stored: StoredAuthorization): Promise<void> {
		await db.sql`INSERT INTO machine_authorizations ${db.sql(toRow(machineId, stored, this.#deps.clock.now()))}`;
	}

	/**
	 * The machine's authorization, restored from its row once per process and shared by every
	 * caller. Throws IdentityError `authorization-expired` when it can no longer act (onEnded has
	 * then been told).
	 */
	get(machineId: string): Promise<Authorization> {
		let pending = this.#cache.get(machineId);
		if (!pending) {
			pending = this.#restore(machineId);
			this.#cache.set(machineId, pending);
			// A failed restore is not kept: the next caller tries again (and sees what the row says then).
			pending.catch(() => {
				if (this.#cache.get(machineId) === pending) this.#cache.delete(machineId);
			});
		}
		return pending;
	}

	/** Forgets the restored authorization and deletes its row (the machine was revoked). */
	async remove(db: Db, machineId: string): Promise<void> {
		this.#cache.delete(machineId);
		await db.sql`DELETE FROM machine_authorizations WHERE machine_id = ${machineId}`;
	}

	/** Forgets the restored authorization, keeping the row. */
	forget(machineId: string): void {
		this.#cache.delete(machineId);
	}

	async #restore(machineId: string): Promise<Authorization> {
		const { identity, log } = this.#deps;
		const stored = await this.#read(machineId);
		if (!stored) {
			this.#ended(machineId);
			throw authorizationGone(machineId);
		}
		try {
			return await identity.restore(stored, machineBinding(machineId), {
				onRenewed: (next) => this.#persist(machineId, next),
				onEnded: () => {
					this.#cache.delete(machineId);
					this.#ended(machineId);
				},
				// Another process may have renewed the pair a moment ago: its row holds the pair that works.
				reload: () => this.#read(machineId),
			});
		} catch (error) {
			if (isIdentityError(error, "authorization-expired")) {
				log.info("a machine's authorization cannot be restored", { machine: machineId });
				this.#ended(machineId);
			}
			throw error;
		}
	}

	#ended(machineId: string): void {
		try {
			this.#deps.onEnded(machineId);
		} catch (error) {
			this.#deps.log.error("a machine authorization listener failed", { machine: machineId, error });
		}
	}

	async #read(machineId: string): Promise<StoredAuthorization | undefined> {
		const { store } = this.#deps;
		const row = await store.one(
			store.sql`SELECT kind, login, github_id, access_token_enc, refresh_token_enc, expires_at, refresh_expires_at
				FROM machine_authorizations WHERE machine_id = ${machineId}`,
			authorizationRowSchema,
		);
		return row && fromRow(row);
	}

	async #persist(machineId: string, stored: StoredAuthorization): Promise<void> {
		if (stored.kind !== "github") return;
		const { store, clock } = this.#deps;
		await store.sql`UPDATE machine_authorizations SET access_token_enc = ${stored.accessToken},
			refresh_token_enc = ${stored.refreshToken}, expires_at = ${stored.expiresAt},
			refresh_expires_at = ${stored.refreshExpiresAt}, updated_at = ${clock.now()}
			WHERE machine_id = ${machineId}`;
	}
}

function toRow(machineId: string, stored: StoredAuthorization, now: number) {
	if (stored.kind === "local") {
		return {
			machine_id: machineId,
			kind: "local",
			login: stored.login,
			github_id: null,
			access_token_enc: null,
			refresh_token_enc: null,
			expires_at: null,
			refresh_expires_at: null,
			updated_at: now,
		};
	}
	return {
		machine_id: machineId,
		kind: "github",
		login: stored.login,
		github_id: stored.githubId,
		access_token_enc: stored.accessToken,
		refresh_token_enc: stored.refreshToken,
		expires_at: stored.expiresAt,
		refresh_expires_at: stored.refreshExpiresAt,
		updated_at: now,
	};
}

function fromRow(row: AuthorizationRow): StoredAuthorization {
	if (row.kind === "local" || !row.access_token_enc) return { kind: "local", login: row.login };
	return {
		kind: "github",
		login: row.login,
		githubId: row.github_id,
		accessToken: row.access_token_enc,
		refreshToken: row.refresh_token_enc,
		expiresAt: row.expires_at,
		refreshExpiresAt: row.refresh_expires_at,
	};
}

function authorizationGone(machineId: string): IdentityError {
	return new IdentityError(
		"authorization-expired",
		`Machine ${machineId} holds no authorization.`,
		"Pair the machine again.",
	);
}
