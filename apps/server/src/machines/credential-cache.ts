// What credential checks found in the store, kept in this process so a valid machine or Planner credential is
// checked without a database round trip (on PostgreSQL that round trip was most of a check's p99).
//
// Why it may be trusted: one server process serves a store (docs/machines.md, Credential checks), and every
// write in this process that can make a cached answer wrong goes through change(): revoking a machine, marking
// it to be paired again, deleting Planner credentials. While any change runs, checks skip the cache and ask
// the store; a check whose store read overlapped a change keeps nothing; the entries a change touches are
// dropped before its write and again after it. So once a revocation's write is done, no later check can
// pass on what was cached before it. Only valid answers are kept (an unknown credential always asks the
// store: a stream of made-up tokens cannot fill the cache), and a cached Planner credential is still
// refused the moment it expires. A second process writing to the same store would not be seen: there is
// none (pairing claims, sweeps and revocations all run here).
import { sameDigest } from "./credentials";

/** Which machine (and document) a cached answer is about, so a change can drop it. */
export interface CredentialScope {
	machineId: string;
	documentId?: string;
}

interface Entry {
	digest: string;
	scope: CredentialScope;
	value: unknown;
}

/** Past this many entries the least recently used go: 10,000 machines with a Planner credential each fit twice. */
export const CREDENTIAL_CACHE_MAX = 50_000;

export class CredentialCache {
	readonly #entries = new Map<string, Entry>();
	/** Changes that have started and not finished. */
	#changing = 0;
	/** Moves at every change's start and end: a read that saw it move keeps nothing. */
	#generation = 0;

	constructor(private readonly max = CREDENTIAL_CACHE_MAX) {}

	/**
	 * The cached answer for a digest, else load()'s: it returns the answer, which machine (and document) it is
	 * about, and whether it may be kept (valid answers only), or undefined for none.
	 */
	async read<T>(
		digest: string,
		load: () => Promise<{ value: T; scope: CredentialScope; keep: boolean } | undefined>,
	): Promise<T | undefined> {
		const hit = this.#changing === 0 ? this.#entries.get(digest) : undefined;
		// The map found it by digest; compared once more in constant time, as a row found by index is.
		if (hit && sameDigest(hit.digest, digest)) {
			this.#entries.delete(digest);
			this.#entries.set(digest, hit);
			return hit.value as T;
		}
		const generation = this.#generation;
		const loaded = await load();
		if (!loaded) return undefined;
		if (loaded.keep && this.#changing === 0 && generation === this.#generation) {
			this.#entries.set(digest, { digest, scope: loaded.scope, value: loaded.value });
			if (this.#entries.size > this.max) this.#entries.delete(this.#entries.keys().next().value as string);
		}
		return loaded.value;
	}

	/**
	 * Runs a write that can make cached answers about the scope wrong (a machine's, or a machine's for one
	 * document, or a document's for every machine). Checks meanwhile ask the store.
	 */
	async change<T>(scope: Partial<CredentialScope>, write: () => Promise<T>): Promise<T> {
		this.#changing++;
		this.#generation++;
		this.#drop(scope);
		try {
			return await write();
		} finally {
			this.#drop(scope);
			this.#generation++;
			this.#changing--;
		}
	}

	/** Drops cached answers by a test of their own (expired Planner credentials, after a sweep). */
	dropWhere(test: (value: unknown) => boolean): void {
		for (const [digest, entry] of this.#entries) if (test(entry.value)) this.#entries.delete(digest);
	}

	get size(): number {
		return this.#entries.size;
	}

	// A scan: changes are rare (a revocation, a withdrawal) and the map is bounded.
	#drop(scope: Partial<CredentialScope>): void {
		for (const [digest, entry] of this.#entries) {
			if (scope.machineId !== undefined && entry.scope.machineId !== scope.machineId) continue;
			if (scope.documentId !== undefined && entry.scope.documentId !== scope.documentId) continue;
			this.#entries.delete(digest);
		}
	}
}
