// In-process publish/subscribe per document: every service publishes its changes here, and the /ws socket forwards them.
import type { Logger } from "../log";
import { isPlainMessageDelta, type LiveEvent, liveEventSchema } from "./events";

export type LiveListener = (event: LiveEvent) => void;

export interface LiveHubOptions {
	/** Where a listener's exception is reported; it never reaches the publisher or other listeners. */
	log?: Logger;
	/** Check every event against its schema before delivering it (default true: a bad event is a bug). */
	validate?: boolean;
}

/**
 * Listeners run synchronously, in subscription order, inside publish: a service publishes after
 * its transaction commits, so a listener sees committed state and events arrive in the order the
 * changes were made. A listener must not block; the socket layer queues what it sends.
 */
export class LiveHub {
	readonly #byDocument = new Map<string, Set<LiveListener>>();
	readonly #all = new Set<(documentId: string, event: LiveEvent) => void>();
	readonly #log?: Logger;
	readonly #validate: boolean;

	constructor(options: LiveHubOptions = {}) {
		this.#log = options.log;
		this.#validate = options.validate ?? true;
	}

	publish(documentId: string, event: LiveEvent): void {
		if (event.documentId !== documentId) {
			throw new Error(`A ${event.type} event for ${event.documentId} was published to ${documentId}.`);
		}
		const checked = !this.#validate || isPlainMessageDelta(event) ? event : liveEventSchema.parse(event);
		for (const listener of [...(this.#byDocument.get(documentId) ?? [])])
			this.#deliver(() => listener(checked));
		for (const listener of [...this.#all]) this.#deliver(() => listener(documentId, checked));
	}

	/** Calls listener with every later event of the document; returns the unsubscribe function (idempotent). */
	subscribe(documentId: string, listener: LiveListener): () => void {
		// A wrapper per subscription, so the same function subscribed twice is two subscriptions.
		const entry: LiveListener = (event) => listener(event);
		let set = this.#byDocument.get(documentId);
		if (!set) {
			set = new Set();
			this.#byDocument.set(documentId, set);
		}
		set.add(entry);
		return () => {
			const current = this.#byDocument.get(documentId);
			if (!current?.delete(entry)) return;
			if (current.size === 0) this.#byDocument.delete(documentId);
		};
	}

	/** Every event of every document (for relaying to other processes later); returns the unsubscribe function. */
	subscribeAll(listener: (documentId: string, event: LiveEvent) => void): () => void {
		const entry = (documentId: string, event: LiveEvent) => listener(documentId, event);
		this.#all.add(entry);
		return () => {
			this.#all.delete(entry);
		};
	}

	/** How many listeners a document has (for tests and metrics). */
	listenerCount(documentId: string): number {
		return this.#byDocument.get(documentId)?.size ?? 0;
	}

	#deliver(fn: () => void): void {
		try {
			fn();
		} catch (error) {
			this.#log?.error("live listener failed", { error });
		}
	}
}
