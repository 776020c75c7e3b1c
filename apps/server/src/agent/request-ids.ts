// The input-request ids a connection remembers (spec: Client to server): every open one and the last 1,024
// received. A remembered id sent again is a protocol violation.
import { REMEMBERED_REQUEST_IDS } from "@chopin/agent-link";

export class RememberedIds {
	readonly #open = new Set<string>();
	readonly #recent = new Set<string>();
	readonly #order: string[] = [];
	#head = 0;

	constructor(private readonly capacity = REMEMBERED_REQUEST_IDS) {}

	/** Remembers a newly received id as open; false when the id is remembered already. */
	receive(id: string): boolean {
		if (this.#open.has(id) || this.#recent.has(id)) return false;
		this.#open.add(id);
		// A ring of the last `capacity` ids received; the oldest leaves the set as a new one comes.
		if (this.#order.length < this.capacity) this.#order.push(id);
		else {
			this.#recent.delete(this.#order[this.#head]!);
			this.#order[this.#head] = id;
			this.#head = (this.#head + 1) % this.capacity;
		}
		this.#recent.add(id);
		return true;
	}

	/** The request settled: it is remembered only while it is among the last `capacity` received. */
	settle(id: string): void {
		this.#open.delete(id);
	}

	isOpen(id: string): boolean {
		return this.#open.has(id);
	}

	get openCount(): number {
		return this.#open.size;
	}
}
