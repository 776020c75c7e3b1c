/** The link a backend holds once attached: what it attached to, its sessions, and how it ends. */
import type { Feature } from "../features";
import type { Catalog } from "../schemas/catalog";
import type { Attached } from "../schemas/handshake";
import type { Connection } from "./connection";
import { LinkError } from "./errors";
import type { LinkClosed } from "./link-closed";
import type { Session } from "./session";

export class AgentLink {
	readonly #connection: Connection;

	/** @internal connectAgent makes it. */
	constructor(connection: Connection) {
		this.#connection = connection;
	}

	/** The attached document, and the features granted: those asked for that attached lists. */
	get attached(): { document: Attached["document"]; features: Feature[] } {
		return { document: this.#connection.attached!.document, features: [...this.#connection.features] };
	}

	get features(): ReadonlySet<Feature> {
		return this.#connection.features;
	}

	/** The sessions the link carries now. */
	get sessions(): ReadonlyMap<string, Session> {
		return this.#connection.sessions;
	}

	/** Settles once when the link ends, however it ends; with resume after an unexpected drop. */
	get closed(): Promise<LinkClosed> {
		return this.#connection.closed;
	}

	/** Sends detach and closes with 1000: everything the link held ends, even with resumable-sessions. */
	detach(): Promise<LinkClosed> {
		return this.#connection.detach();
	}

	/**
	 * Reports the models, thinking levels and commands the client offers (capability-catalog).
	 * Each report replaces the last; send it again after a resume.
	 */
	reportCapabilities(catalog: Catalog): void {
		if (!this.#connection.features.has("capability-catalog")) {
			throw new LinkError(
				"feature-not-granted",
				"capabilities needs capability-catalog, which this link did not grant.",
				'Ask for it with features: ["capability-catalog"] and check link.features.',
			);
		}
		this.#connection.sendText(this.#connection.encode({ type: "capabilities", catalog }));
	}
}
