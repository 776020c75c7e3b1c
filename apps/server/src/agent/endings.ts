// The explicit ends of a document's Planner (spec: Ownership): the owner's sign-out or its expiry, a reset, a
// revoked or withdrawn machine, the document archived or deleted. The attached link is refused and closed, a
// disconnected hold ends, the ownership is released at once, and an attach checked before the end is refused
// after it as the attached link would have been (counts).
import type { AttachedPlanner } from "./attached";
import type { AgentDeps } from "./deps";
import type { Ownership } from "./ownership";
import type { LinkFilter } from "./planner-service";
import { wording } from "./wording";

export type EndCode = "access-revoked" | "sign-in-required" | "document-archived" | "document-unavailable";

export interface EndingsHost {
	readonly deps: AgentDeps;
	readonly ownership: Ownership;
	attached(documentId: string): AttachedPlanner | undefined;
	/** Ends what a dropped link of the document kept. */
	endHold(documentId: string): void;
}

export class Endings {
	/** Per document: bumped by every explicit end, so an attach checked before it is refused after. */
	readonly counts = new Map<string, { n: number; code: EndCode; message: string }>();

	constructor(private readonly host: EndingsHost) {}

	/** An explicit end: the attached link is refused and closed, a grace period ends, and attaches in flight are refused. */
	end(documentId: string, code: "access-revoked" | "sign-in-required", message: string): void {
		this.#bump(documentId, code, message);
		this.host.attached(documentId)?.link.refuse(code, message);
		this.host.endHold(documentId);
		this.host.ownership.release(documentId);
	}

	/** Ends every holding the filter matches; how many. */
	closeLinks(
		filter: LinkFilter,
		refusal: { code: "access-revoked" | "sign-in-required"; message: string | ((login: string) => string) },
	): number {
		const { ownership } = this.host;
		let n = 0;
		for (const documentId of ownership.documents()) {
			const holder = ownership.holder(documentId)!;
			if (filter.documentId && filter.documentId !== documentId) continue;
			if (filter.login && filter.login.toLowerCase() !== holder.login.toLowerCase()) continue;
			if (filter.machineId && filter.machineId !== holder.machineId) continue;
			const message = typeof refusal.message === "string" ? refusal.message : refusal.message(holder.login);
			this.end(documentId, refusal.code, message);
			n++;
		}
		return n;
	}

	/** A browser sign-in ended (sign-out or expiry): every holding resting on it ends. */
	signInEnded(sessionId: string): void {
		const { publicUrl } = this.host.deps.config;
		const { ownership } = this.host;
		for (const documentId of ownership.documents()) {
			const holder = ownership.holder(documentId);
			if (holder?.signInSessionId !== sessionId) continue;
			this.end(documentId, "sign-in-required", wording.signInEnded(holder.login, publicUrl));
		}
	}

	documentGone(documentId: string, change: "archived" | "deleted"): void {
		const holder = this.host.ownership.holder(documentId);
		// An attach checked before this is refused as the document now reads; an attached link loses it.
		const code = change === "archived" ? "document-archived" : "document-unavailable";
		const message = wording.documentGone(holder?.login ?? "the Planner", change);
		this.#bump(documentId, code, message);
		this.host.attached(documentId)?.link.refuse("access-revoked", message);
		this.host.endHold(documentId);
		this.host.ownership.release(documentId);
	}

	#bump(documentId: string, code: EndCode, message: string): void {
		const previous = this.counts.get(documentId)?.n ?? 0;
		this.counts.set(documentId, { n: previous + 1, code, message });
	}
}
