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

/**
 * The machine_authorizations row as another query's LEFT JOIN gives it (each column as `a_<column>`), so a
 * check that needs the authorization too reads it in its own round trip (planner-credentials.ts, machine-rows.ts).
 */
export const joinedAuthorizationSchema = z.object({
	a_kind: z.enum(["github", "local"]).nullable(),
	a_login: z.string().nullable(),
	a_github_id: z.number().nullable(),
	a_access_token_enc: bytes.nullable(),
	a_refresh_token_enc: bytes.nullable(),
	a_expires_at: z.number().nullable(),
	a_refresh_expires_at: z.number().nullable(),
});

/** The columns joinedAuthorizationSchema reads, from machine_authorizations joined under the alias `a`. */
export function joinedAuthorizationColumns(db: Db) {
	return db.sql`a.kind AS a_kind, a.login AS a_login, a.github_id AS a_github_id,
		a.access_token_enc AS a_access_token_enc, a.refresh_token_enc AS a_refresh_token_enc,
		a.expires_at AS a_expires_at, a.refresh_expires_at AS a_refresh_expires_at`;
}

/** The stored authorization a joined row holds, or undefined when the machine has none. */
export function joinedAuthorization(
	row: z.infer<typeof joinedAuthorizationSchema>,
): StoredAuthorization | undefined {
	if (row.a_kind === null || row.a_login === null) return undefined;
	return fromRow({
		kind: row.a_kind,
		login: row.a_login,
		github_id: row.a_github_id,
		access_token_enc: row.a_access_token_enc,
		refresh_token_enc: row.a_refresh_token_enc,
		expires_at: row.a_expires_at,
		refresh_expires_at: row.a_refresh_expires_at,
	});
}

/** A machine's row as a caller read it, and when: the changes() count taken before its query. */
export interface ReadAuthorization {
	stored: StoredAuthorization | undefined;
	changesBefore: number;
}

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
	/**
	 * Moves before and after every write of a row and whenever a restored authorization is dropped: a row a
	 * caller read while it moved may be out of date, so it is not restored from (get() reads it again).
	 */
	#changes = 0;

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

	/** Taken before a query that reads the row itself, to hand to get() with what it read. */
	changes(): number {
		return this.#changes;
	}

	/**
	 * The machine's authorization, restored from its row once per process and shared by every
	 * caller. Throws IdentityError `authorization-expired` when it can no longer act (onEnded has
	 * then been told). A caller that already read the row (`read`) saves the round trip, unless the
	 * row was written or a restored authorization dropped since its query began (changes() moved):
	 * then the row is read again.
	 */
	get(machineId: string, read?: ReadAuthorization): Promise<Authorization> {
		let pending = this.#cache.get(machineId);
		if (!pending) {
			const fresh = read !== undefined && read.changesBefore === this.#changes;
			pending = this.#restore(machineId, fresh ? { stored: read.stored } : undefined);
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
		this.#changes++;
		this.#cache.delete(machineId);
		try {
			await db.sql`DELETE FROM machine_authorizations WHERE machine_id = ${machineId}`;
		} finally {
			this.#changes++;
		}
	}

	/** Forgets the restored authorization, keeping the row. */
	forget(machineId: string): void {
		this.#changes++;
		this.#cache.delete(machineId);
	}

	async #restore(
		machineId: string,
		read?: { stored: StoredAuthorization | undefined },
	): Promise<Authorization> {
		const { identity, log } = this.#deps;
		const stored = read ? read.stored : await this.#read(machineId);
		if (!stored) {
			this.#ended(machineId);
			throw authorizationGone(machineId);
		}
		try {
			return await identity.restore(stored, machineBinding(machineId), {
				onRenewed: (next) => this.#persist(machineId, next),
				onEnded: () => {
					this.#changes++;
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
		this.#changes++;
		try {
			await store.sql`UPDATE machine_authorizations SET access_token_enc = ${stored.accessToken},
				refresh_token_enc = ${stored.refreshToken}, expires_at = ${stored.expiresAt},
				refresh_expires_at = ${stored.refreshExpiresAt}, updated_at = ${clock.now()}
				WHERE machine_id = ${machineId}`;
		} finally {
			this.#changes++;
		}
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
