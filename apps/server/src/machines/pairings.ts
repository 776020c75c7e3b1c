// Pairing a machine: start (the CLI), confirm (a signed-in person with push access, typing the code), claim (the CLI, once).
import type { Clock } from "@chopin/agent-link/clock";
import {
	type Checkout,
	type ClientInfo,
	checkoutSchema,
	clientInfoSchema,
	type PairingClaimed,
	type PairingConfirmed,
	type PairingStart,
	type PairingStarted,
} from "@chopin/agent-link/machine";
import { z } from "zod";
import { type Authorization, permits } from "../auth/authorization";
import { isIdentityError } from "../auth/errors";
import { githubUnavailable, signInRequired } from "../auth/guards";
import type { Identity } from "../auth/identity";
import { randomToken, sha256Hex } from "../auth/tokens";
import { RateLimiter, rateLimited } from "../http/rate-limit";
import { randomId } from "../ids";
import type { Logger } from "../log";
import { dbBoolean, dbJson } from "../store/codecs";
import type { Db, Store } from "../store/store";
import type { MachineAuthorizations } from "./authorizations";
import { type VersionPolicy, versionRefusal } from "./client-version";
import { credentialDigest, newMachineCredential, sameDigest } from "./credentials";
import {
	pairingAccountMismatch,
	pairingClaimed,
	pairingCodeWrong,
	pairingConfirmed,
	pairingExpired,
	pairingForbidden,
	pairingNotFound,
	pairingSecretWrong,
	pairingsFull,
	refusalError,
} from "./errors";
import { insertMachine, setCredential, uniqueRepositories } from "./machine-rows";
import { newPairingCode, sameCode } from "./pairing-code";

/** A pairing must be confirmed and claimed within 5 minutes of its start. */
export const PAIRING_TTL_MS = 5 * 60_000;
/** How often the CLI is asked to poll the claim. */
export const PAIRING_POLL_MS = 2_000;
/** Pairings waiting for confirmation, at most: on the whole server, and from one address. */
export const MAX_PENDING_PAIRINGS = 1_000;
export const MAX_PENDING_PER_ADDRESS = 5;
/** Starting pairings, per address: a burst of 10, then one every 30 seconds. */
export const START_LIMIT = { capacity: 10, refillMs: 30_000 };
/** Wrong secrets and wrong codes, per address: a burst of 10, then one every 6 seconds. */
export const GUESS_LIMIT = { capacity: 10, refillMs: 6_000 };
/** Wrong codes for one pairing, from anywhere: 5, then one a minute (a pairing lives 5 minutes). */
export const CODE_GUESS_LIMIT = { capacity: 5, refillMs: 60_000 };
/** Expired pairings keep their row this long, so a late poll hears pairing-expired rather than not-found. */
export const PAIRING_KEEP_MS = 60 * 60_000;

/** The intent name the GitHub grant of a pairing is started with. */
export const PAIRING_INTENT = "machine-pairing";

const pairingRowSchema = z.object({
	id: z.string(),
	secret_digest: z.string(),
	code: z.string(),
	label: z.string(),
	checkouts: dbJson(z.array(checkoutSchema)),
	client: dbJson(clientInfoSchema),
	created_at: z.number(),
	expires_at: z.number(),
	confirmed_by: z.string().nullable(),
	auto_run: dbBoolean.nullable(),
	confirmed_at: z.number().nullable(),
	machine_id: z.string().nullable(),
	claimed_at: z.number().nullable(),
});
type PairingRow = z.infer<typeof pairingRowSchema>;

export const PAIRING_STATUSES = ["pending", "authorizing", "confirmed", "claimed", "expired"] as const;

/** What the confirm page shows (never the code or the secret). */
export const pairingViewSchema = z.strictObject({
	id: z.string(),
	label: z.string(),
	checkouts: z.array(checkoutSchema),
	repositories: z.array(z.string()),
	client: clientInfoSchema,
	createdAt: z.number(),
	expiresAt: z.number(),
	status: z.enum(PAIRING_STATUSES),
	/** Who confirmed it, once someone has. */
	confirmedBy: z.string().optional(),
	machine: z.string().optional(),
});
export type PairingView = z.infer<typeof pairingViewSchema>;

/** The person confirming: who, and the authorization their browser session acts with. */
export interface Confirmer {
	login: string;
	authorization: Authorization;
}

export interface PairingsDeps {
	store: Store;
	clock: Clock;
	log: Logger;
	identity: Identity;
	authorizations: MachineAuthorizations;
	publicUrl(): string;
	versionPolicy(): VersionPolicy;
	/** A machine was confirmed (made), for listeners such as the Machines page. */
	onMachineCreated?(machineId: string): void;
}

export class Pairings {
	readonly #deps: PairingsDeps;
	readonly #starts: RateLimiter;
	readonly #guesses: RateLimiter;
	readonly #codeGuesses: RateLimiter;

	constructor(deps: PairingsDeps) {
		this.#deps = deps;
		this.#starts = new RateLimiter({ ...START_LIMIT, clock: deps.clock });
		this.#guesses = new RateLimiter({ ...GUESS_LIMIT, clock: deps.clock });
		this.#codeGuesses = new RateLimiter({ ...CODE_GUESS_LIMIT, clock: deps.clock });
	}

	async start(body: PairingStart, address: string): Promise<PairingStarted> {
		const refusal = versionRefusal(body.client, this.#deps.versionPolicy());
		if (refusal) throw refusalError(refusal);
		this.#starts.consume(address, "pairing");
		const { store, clock } = this.#deps;
		const now = clock.now();
		const pending = await store.one(
			store.sql`SELECT count(*) AS total, sum(CASE WHEN address = ${address} THEN 1 ELSE 0 END) AS mine
				FROM machine_pairings WHERE expires_at > ${now} AND machine_id IS NULL`,
		);
		if (Number(pending?.total ?? 0) >= MAX_PENDING_PAIRINGS) throw pairingsFull("server");
		if (Number(pending?.mine ?? 0) >= MAX_PENDING_PER_ADDRESS) throw pairingsFull("address");
		const id = `prg_${randomId(16)}`;
		const secret = randomToken();
		const code = newPairingCode();
		const expiresAt = now + PAIRING_TTL_MS;
		await store.sql`INSERT INTO machine_pairings ${store.sql({
			id,
			secret_digest: sha256Hex(secret),
			code,
			label: body.label,
			checkouts: JSON.stringify(body.checkouts),
			client: JSON.stringify(body.client),
			address,
			created_at: now,
			expires_at: expiresAt,
		})}`;
		this.#deps.log.info("pairing started", { pairing: id, label: body.label, client: body.client });
		return {
			id,
			secret,
			code,
			link: `${this.#deps.publicUrl()}/pair/${id}`,
			expiresAt,
			pollMs: PAIRING_POLL_MS,
		};
	}

	/** The pairing as its confirm page shows it; 404 pairing-not-found. */
	async view(id: string): Promise<PairingView> {
		const row = await this.#row(this.#deps.store, id);
		if (!row) throw pairingNotFound();
		return {
			id: row.id,
			label: row.label,
			checkouts: row.checkouts,
			repositories: uniqueRepositories(row.checkouts),
			client: row.client,
			createdAt: row.created_at,
			expiresAt: row.expires_at,
			status: this.#status(row),
			...(row.confirmed_by !== null && { confirmedBy: row.confirmed_by }),
			...(row.machine_id !== null && { machine: row.machine_id }),
		};
	}

	/**
	 * A signed-in person confirms with the code. Local mode: the machine is made at once with the
	 * person's local authorization. GitHub mode: the pairing waits for the machine's own grant, and
	 * the answer says where to send the browser for it (see completeGrant).
	 */
	async confirm(
		id: string,
		input: { code: string; autoRun: boolean },
		who: Confirmer,
		address: string,
	): Promise<PairingConfirmed> {
		// The pairing's own limit comes first: its code is short, so a right guess must not get past it.
		this.#checkCodeGuesses(id);
		const row = await this.#row(this.#deps.store, id);
		if (!row) throw this.#failed(address, pairingNotFound());
		if (row.claimed_at !== null || row.machine_id !== null) throw pairingConfirmed();
		if (row.expires_at <= this.#deps.clock.now()) throw pairingExpired();
		if (!sameCode(input.code, row.code)) throw this.#failed(address, pairingCodeWrong(), id);
		if (row.confirmed_by !== null && !sameLogin(row.confirmed_by, who.login)) throw pairingConfirmed();
		await this.#requirePush(who.authorization, who.login, row);
		if (this.#deps.identity.mode === "local") {
			const machine = await this.#makeMachine(row, who.login, input.autoRun, who.authorization);
			return { status: "confirmed", machine };
		}
		const { store } = this.#deps;
		const updated = await store.many(
			store.sql`UPDATE machine_pairings SET confirmed_by = ${who.login}, auto_run = ${input.autoRun}
				WHERE id = ${id} AND machine_id IS NULL AND (confirmed_by IS NULL OR confirmed_by = ${row.confirmed_by ?? who.login})
				RETURNING id`,
		);
		if (updated.length !== 1) throw pairingConfirmed();
		this.#deps.log.info("pairing awaits its GitHub grant", { pairing: id, login: who.login });
		const start = new URLSearchParams({ intent: PAIRING_INTENT, next: `/pair/${id}`, login: who.login });
		return { status: "authorize", location: `/auth/github/start?${start}` };
	}

	/**
	 * GitHub mode's second half: a fresh grant for the person who confirmed, which becomes the
	 * machine's own authorization (GitHub rotates refresh tokens, so it must not share a session's).
	 */
	async completeGrant(
		id: string,
		grant: { login: string; authorization: Authorization },
	): Promise<{ machine: string }> {
		const row = await this.#row(this.#deps.store, id);
		if (!row) throw pairingNotFound();
		if (row.machine_id !== null || row.claimed_at !== null) throw pairingConfirmed();
		if (row.expires_at <= this.#deps.clock.now()) throw pairingExpired();
		if (row.confirmed_by === null) throw pairingNotFound();
		if (!sameLogin(row.confirmed_by, grant.login))
			throw pairingAccountMismatch(row.confirmed_by, grant.login);
		await this.#requirePush(grant.authorization, grant.login, row);
		const machine = await this.#makeMachine(row, grant.login, row.auto_run ?? false, grant.authorization);
		return { machine: machine.id };
	}

	/** The CLI's poll: pending until confirmed, then the credential exactly once. */
	async claim(id: string, secret: string, address: string, client?: ClientInfo): Promise<PairingClaimed> {
		if (client) {
			const refusal = versionRefusal(client, this.#deps.versionPolicy());
			if (refusal) throw refusalError(refusal);
		}
		const { store, clock } = this.#deps;
		const row = await this.#row(store, id);
		// The secret is checked first (in constant time); only a failure meets the address's limit, so
		// another client's wrong guesses from the same address never refuse the right secret.
		if (!row) throw this.#failed(address, pairingNotFound());
		if (!sameDigest(sha256Hex(secret), row.secret_digest)) throw this.#failed(address, pairingSecretWrong());
		if (row.claimed_at !== null) throw pairingClaimed();
		const now = clock.now();
		if (row.expires_at <= now) throw pairingExpired();
		if (row.machine_id === null) return { status: "pending", expiresAt: row.expires_at };
		const credential = newMachineCredential();
		const machine = await store.transaction(async (tx) => {
			const claimed = await tx.one(
				tx.sql`UPDATE machine_pairings SET claimed_at = ${now}
					WHERE id = ${id} AND claimed_at IS NULL AND machine_id IS NOT NULL RETURNING machine_id`,
			);
			if (!claimed) return undefined;
			const machineId = String(claimed.machine_id);
			// The digest is stored before the credential leaves: a restart right after still knows it.
			if (!(await setCredential(tx, machineId, credentialDigest(credential), now))) return undefined;
			const m = await tx.one(tx.sql`SELECT id, label, owner FROM machines WHERE id = ${machineId}`);
			return m && { id: String(m.id), label: String(m.label), owner: String(m.owner) };
		});
		if (!machine) throw pairingClaimed();
		this.#deps.log.info("pairing claimed", { pairing: id, machine: machine.id });
		return { status: "claimed", credential, machine };
	}

	/**
	 * Deletes pairings long expired, and machines made by a pairing nobody claimed in time (they
	 * never held a credential). Returns how many machines went.
	 */
	async sweep(): Promise<number> {
		const { store, clock } = this.#deps;
		const now = clock.now();
		const machines = await store.many(
			store.sql`DELETE FROM machines WHERE credential_digest IS NULL AND id IN
				(SELECT machine_id FROM machine_pairings WHERE expires_at <= ${now} AND claimed_at IS NULL AND machine_id IS NOT NULL)
				RETURNING id`,
		);
		await store.sql`DELETE FROM machine_pairings WHERE expires_at <= ${now - PAIRING_KEEP_MS}`;
		return machines.length;
	}

	#status(row: PairingRow): PairingView["status"] {
		if (row.claimed_at !== null) return "claimed";
		if (row.expires_at <= this.#deps.clock.now()) return "expired";
		if (row.machine_id !== null) return "confirmed";
		if (row.confirmed_by !== null) return "authorizing";
		return "pending";
	}

	/** The person must be able to push to (or administer) at least one of the pairing's repositories. */
	async #requirePush(authorization: Authorization, login: string, row: PairingRow): Promise<void> {
		const repositories = uniqueRepositories(row.checkouts);
		for (const repository of repositories) {
			try {
				if (permits(await this.#deps.identity.permission(authorization, repository), "write")) return;
			} catch (error) {
				if (isIdentityError(error, "unavailable")) throw githubUnavailable(error.retryAfterMs);
				if (isIdentityError(error, "authorization-expired") || isIdentityError(error, "unauthorized"))
					throw signInRequired();
				throw error;
			}
		}
		throw pairingForbidden(login, repositories);
	}

	async #makeMachine(
		row: PairingRow,
		owner: string,
		autoRun: boolean,
		authorization: Authorization,
	): Promise<{ id: string; label: string; owner: string; autoRun: boolean }> {
		const { store, clock, authorizations } = this.#deps;
		const id = `mch_${randomId(16)}`;
		// Sealed before the transaction: on SQLite a transaction holds every other statement.
		const sealed = await authorizations.seal(id, authorization);
		const now = clock.now();
		const made = await store
			.transaction(async (tx) => {
				await insertMachine(tx, {
					id,
					owner,
					label: row.label,
					client: row.client,
					checkouts: row.checkouts as Checkout[],
					autoRun,
					now,
				});
				await authorizations.insert(tx, id, sealed);
				// The pairing takes the machine only if nobody confirmed it meanwhile; otherwise all of it rolls back.
				const taken = await tx.many(
					tx.sql`UPDATE machine_pairings SET machine_id = ${id}, confirmed_by = ${owner}, auto_run = ${autoRun},
						confirmed_at = ${now}
						WHERE id = ${row.id} AND machine_id IS NULL AND claimed_at IS NULL AND expires_at > ${now}
						RETURNING id`,
				);
				if (taken.length !== 1) throw new LostRace();
				return true;
			})
			.catch((error: unknown) => {
				if (error instanceof LostRace) return false;
				throw error;
			});
		if (!made) throw pairingConfirmed();
		this.#deps.log.info("pairing confirmed", { pairing: row.id, machine: id, owner, autoRun });
		this.#deps.onMachineCreated?.(id);
		return { id, label: row.label, owner, autoRun };
	}

	/** Wrong codes for one pairing, from anywhere: refused before the code is compared. */
	#checkCodeGuesses(pairing: string): void {
		const wait = this.#codeGuesses.blocked(pairing);
		if (wait !== undefined) throw rateLimited(wait, "pairing");
	}

	/**
	 * A wrong guess (secret, code, or a pairing that is not there): 429 when the address has none left,
	 * else the refusal; either way it is charged, to the address and to the pairing whose code it was.
	 */
	#failed(address: string, refusal: Error, pairing?: string): Error {
		const wait = this.#guesses.blocked(address);
		this.#guesses.take(address);
		if (pairing !== undefined) this.#codeGuesses.take(pairing);
		return wait === undefined ? refusal : rateLimited(wait, "pairing");
	}

	#row(db: Db, id: string): Promise<PairingRow | undefined> {
		if (!/^prg_[a-z2-7]{16}$/.test(id)) return Promise.resolve(undefined);
		return db.one(db.sql`SELECT * FROM machine_pairings WHERE id = ${id}`, pairingRowSchema);
	}
}

/** Thrown inside the transaction to roll it back when another confirm won. */
class LostRace extends Error {}

function sameLogin(a: string, b: string): boolean {
	return a.toLowerCase() === b.toLowerCase();
}
