// A small bounded cache whose entries expire on the injected clock: GitHub answers kept for seconds, not forever.
import type { Clock } from "@chopin/agent-link/clock";

export class TtlCache<V> {
	readonly #entries = new Map<string, { value: V; until: number }>();

	constructor(
		readonly ttlMs: number,
		readonly clock: Pick<Clock, "now">,
		readonly maxEntries = 10_000,
	) {}

	get(key: string): V | undefined {
		const entry = this.#entries.get(key);
		if (!entry) return undefined;
		if (this.clock.now() >= entry.until) {
			this.#entries.delete(key);
			return undefined;
		}
		return entry.value;
	}

	set(key: string, value: V): void {
		this.#entries.delete(key);
		if (this.#entries.size >= this.maxEntries) {
			// Insertion order: the first key is the oldest entry.
			const oldest = this.#entries.keys().next().value;
			if (oldest !== undefined) this.#entries.delete(oldest);
		}
		this.#entries.set(key, { value, until: this.clock.now() + this.ttlMs });
	}

	delete(key: string): void {
		this.#entries.delete(key);
	}

	/** Drops every entry whose key starts with prefix (all of one login's, say). */
	deletePrefix(prefix: string): void {
		for (const key of this.#entries.keys()) if (key.startsWith(prefix)) this.#entries.delete(key);
	}

	get size(): number {
		return this.#entries.size;
	}
}
