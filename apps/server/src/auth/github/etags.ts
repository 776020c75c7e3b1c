// GitHub answers kept with their ETag so the next ask is a conditional request: a 304 is GitHub saying the answer is
// still this one (and costs no rate limit), so nothing kept here can hide a change. Keyed by the token's digest.
import { sha256Hex } from "../tokens";

/** How many answers are kept (the oldest goes first): a few hundred bytes each, so a few MB at most. */
export const ETAG_ENTRIES = 10_000;

export interface Tagged {
	etag: string;
	/** The answer as parsed (only the fields Chopin reads), not GitHub's whole body. */
	value: unknown;
}

export class ETags {
	readonly #entries = new Map<string, Tagged>();

	constructor(readonly maxEntries = ETAG_ENTRIES) {}

	/**
	 * The key for one token and path. GitHub's ETag covers the token that asked (another token's, even the same
	 * user's, never matches), so the key is the token's SHA-256, never the token itself.
	 */
	static key(token: string, path: string): string {
		return `${sha256Hex(token)}\n${path}`;
	}

	get(key: string): Tagged | undefined {
		const entry = this.#entries.get(key);
		if (!entry) return undefined;
		// Used again: it moves to the back of the line.
		this.#entries.delete(key);
		this.#entries.set(key, entry);
		return entry;
	}

	set(key: string, entry: Tagged): void {
		this.#entries.delete(key);
		if (this.#entries.size >= this.maxEntries) {
			const oldest = this.#entries.keys().next().value;
			if (oldest !== undefined) this.#entries.delete(oldest);
		}
		this.#entries.set(key, entry);
	}

	delete(key: string): void {
		this.#entries.delete(key);
	}

	get size(): number {
		return this.#entries.size;
	}
}
