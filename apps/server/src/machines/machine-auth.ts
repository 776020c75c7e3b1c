// Who is calling with a machine credential: the bearer's machine, refused when revoked, to be paired again, or too old a CLI.
import type { Clock } from "@chopin/agent-link/clock";
import type { ClientInfo } from "@chopin/agent-link/machine";
import type { Store } from "../store/store";
import type { MachineAuthorizations } from "./authorizations";
import { readClient, type VersionPolicy, versionRefusal } from "./client-version";
import type { ContactWrites } from "./contact-writes";
import type { CredentialCache } from "./credential-cache";
import { credentialDigest, isMachineCredential, sameDigest } from "./credentials";
import { type MachineRefusal, machineReauthorize, machineRevoked, refusalError } from "./errors";
import { type CredentialRow, findByDigest } from "./machine-rows";

/**
 * Contact from HTTP calls is noted at most this often per machine, then written with the next batch
 * (contact-writes.ts); the control channel's hellos, reports and drops write it themselves.
 */
export const TOUCH_EVERY_MS = 30_000;

export interface CallingMachine {
	id: string;
	owner: string;
	client: ClientInfo;
}

export type CredentialCheck =
	| { ok: true; id: string; owner: string; reauthorize: boolean }
	| { ok: false; refusal: MachineRefusal };

export class MachineAuth {
	readonly #touched = new Map<string, number>();

	constructor(
		private readonly deps: {
			store: Store;
			clock: Clock;
			versionPolicy(): VersionPolicy;
			/** Shared with PlannerCredentials and the revocations that invalidate it (credential-cache.ts). */
			cache: CredentialCache;
			/** Restored with a first check's own read (findByDigest), for the call's next step. */
			authorizations: MachineAuthorizations;
			/** Where contact is noted: written in batches, off the request path (contact-writes.ts). */
			contacts: ContactWrites;
		},
	) {}

	/**
	 * The machine a bearer names. A missing, malformed, unknown or revoked credential is
	 * machine-revoked: to the CLI they all mean "pair again", and none says which it was.
	 */
	async check(authorizationHeader: string | null): Promise<CredentialCheck> {
		const token = /^Bearer +(\S+) *$/i.exec(authorizationHeader ?? "")?.[1];
		if (!token || !isMachineCredential(token)) return { ok: false, refusal: machineRevoked() };
		const digest = credentialDigest(token);
		const { authorizations } = this.deps;
		const row = await this.deps.cache.read<CredentialRow>(digest, async () => {
			const changesBefore = authorizations.changes();
			const found = await findByDigest(this.deps.store, digest);
			if (!found || !sameDigest(found.row.credential_digest, digest)) return undefined;
			const { row } = found;
			// The authorization read with it is restored now (a decryption, no network), so the call's
			// next step finds it in memory: a machine's first contact is one round trip, not two.
			if (row.revoked_at === null && !row.reauthorize) {
				authorizations.get(row.id, { stored: found.authorization, changesBefore }).catch(() => {
					// Its failure is the caller's to see when it asks: get() keeps no failed restore.
				});
			}
			// A revoked machine's row is never kept: it is refused from the store each time.
			return { value: row, scope: { machineId: row.id }, keep: row.revoked_at === null };
		});
		if (!row || row.revoked_at !== null) {
			return { ok: false, refusal: machineRevoked() };
		}
		return { ok: true, id: row.id, owner: row.owner, reauthorize: row.reauthorize };
	}

	/**
	 * Authenticates a machine's HTTP request in the documented order: the credential (401
	 * machine-revoked, then machine-reauthorize unless allowed), the Chopin-Client header (400),
	 * its version (426 client-version-refused). Counts as contact from the machine.
	 */
	async authenticate(req: Request, options: { allowReauthorize?: boolean } = {}): Promise<CallingMachine> {
		const checked = await this.check(req.headers.get("authorization"));
		if (!checked.ok) throw refusalError(checked.refusal);
		if (checked.reauthorize && !options.allowReauthorize)
			throw refusalError(machineReauthorize(checked.owner));
		const client = readClient(req);
		const refusal = versionRefusal(client, this.deps.versionPolicy());
		if (refusal) throw refusalError(refusal);
		this.touch(checked.id);
		return { id: checked.id, owner: checked.owner, client };
	}

	/** Records contact, at most every TOUCH_EVERY_MS per machine; the write comes with the next batch. */
	touch(machineId: string, force = false): void {
		const now = this.deps.clock.now();
		const last = this.#touched.get(machineId);
		if (!force && last !== undefined && now - last < TOUCH_EVERY_MS) return;
		this.#touched.set(machineId, now);
		this.deps.contacts.note(machineId, now);
	}

	forget(machineId: string): void {
		this.#touched.delete(machineId);
	}
}
