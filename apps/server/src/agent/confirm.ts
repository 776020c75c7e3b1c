// The first message of a resumable link that attached (spec: Resuming after a dropped link): a resume takes back
// what a dropped link of the same account kept, anything else ends it; and the same account's own dead link,
// still attached, taken over by a new link whose first message is a resume naming one of its sessions.
import { type Attach, CLOSE_CODES, type ClientMessage, type Feature } from "@chopin/agent-link";
import type { AttachCheck } from "./attach";
import type { AttachedDocument, AttachedPlanner } from "./attached";
import type { AgentDeps } from "./deps";
import type { EndCode } from "./endings";
import type { Handover } from "./handover";
import type { AgentLink } from "./link";
import type { OrphanAnswers } from "./orphan-answers";
import type { Ownership } from "./ownership";
import type { PlannerStarter } from "./planner-service";
import type { AttachWaiters } from "./reserve";
import { wording } from "./wording";

/**
 * A resumable link attached whose first message decides what it is (spec: Resuming after a dropped link):
 * "fresh", nothing kept for it; "hold", the document's disconnected Planner of the same account, given back
 * by a resume and ended by anything else; "takeover", the same account's own link still attached, which a
 * resume naming one of its sessions shows to be dead.
 */
export type Unconfirmed =
	| { kind: "fresh" }
	| { kind: "hold"; hold: AttachedPlanner; awaitingSignIn?: true }
	/** A resume waiting for the owner's browser sign-in (after a restart); what follows it waits too. */
	| { kind: "waiting"; queue: Exclude<ClientMessage, Attach>[] }
	| {
			kind: "takeover";
			old: AttachedPlanner;
			document: AttachedDocument;
			check: AttachCheck & { ok: true };
			ends: number;
	  };

/** What confirming a link and pressing Stop/Resume need of the Planner service (planner.ts). */
export interface PlannerParts {
	readonly deps: AgentDeps;
	readonly ownership: Ownership;
	readonly attached: Map<string, AttachedPlanner>;
	readonly byLink: Map<string, AttachedPlanner>;
	readonly held: Map<string, AttachedPlanner>;
	readonly ends: Map<string, { n: number; code: EndCode; message: string }>;
	readonly handover: Handover;
	readonly orphans: OrphanAnswers;
	readonly waiters: AttachWaiters;
	starter(): PlannerStarter | undefined;
	bind(link: AgentLink, attached: AttachedDocument, check: AttachCheck & { ok: true }): AttachedPlanner;
	endHoldUnclaimed(documentId: string, hold: AttachedPlanner): void;
	/** Ends a Planner's work in the background (questions withdrawn, runs shown stopped). */
	teardown(planner: AttachedPlanner): void;
	/** Links attached and waiting for the first message that says whether they resume. */
	readonly unconfirmed: Map<string, Unconfirmed>;
	/** What a dropped link kept ends for good. */
	endHold(documentId: string): void;
	/** A message from the link, as if just received (what waited behind a resume). */
	receive(link: AgentLink, message: Exclude<ClientMessage, Attach>): void;
	/** Whether the link asked for a feature this server grants. */
	grants(link: AgentLink, feature: Feature): boolean;
}

/**
 * The document's attached Planner when it is this link's account's own resumable link of the same kind
 * (a browser-bearer client and a paired machine's backend never take each other's links).
 */
export function ownLink(
	host: PlannerParts,
	documentId: string,
	link: AgentLink,
): AttachedPlanner | undefined {
	const holder = host.ownership.holder(documentId);
	if (holder?.state !== "attached") return undefined;
	const old = host.byLink.get(holder.linkId);
	if (!old?.resumable || old.link.principal.kind !== link.principal.kind) return undefined;
	// The same machine's new link replaces its stale one at once (Ownership.acquire), keeping its work.
	if (link.principal.machineId !== undefined && link.principal.machineId === old.link.principal.machineId) {
		return undefined;
	}
	return old.login.toLowerCase() === link.principal.login.toLowerCase() ? old : undefined;
}

/** The first message of a resumable link: a resume takes back what is kept; anything else starts afresh. */
export function confirm(
	host: PlannerParts,
	link: AgentLink,
	pending: Unconfirmed,
	message: Exclude<ClientMessage, Attach>,
): void {
	if (pending.kind === "takeover") {
		takeover(host, link, pending, message);
		return;
	}
	// Handled by the Planner service while the owner's sign-in is awaited.
	if (pending.kind === "waiting") return;
	const planner = host.byLink.get(link.id);
	if (!planner) return;
	const documentId = planner.document.id;
	const hold =
		pending.kind === "hold" && host.held.get(documentId) === pending.hold ? pending.hold : undefined;
	if (message.type === "resume") {
		if (!hold) {
			link.send({ type: "resumed", sessions: [] });
			return;
		}
		host.held.delete(documentId);
		// The hold rests on this link's sign-in from now on (a restart's hold had none).
		if (planner.owner.signInSessionId) hold.owner.signInSessionId = planner.owner.signInSessionId;
		host.handover.forget(documentId);
		void planner.teardown();
		host.attached.set(documentId, hold);
		host.byLink.set(link.id, hold);
		const orphaned = hold.resume(link, message);
		host.deps.log.info("agent link resumed", { link: link.id, document: documentId });
		for (const decisionId of orphaned) host.orphans.add(documentId, decisionId);
		host.orphans.flush(documentId);
		return;
	}
	if (hold) host.endHoldUnclaimed(documentId, hold);
	planner.dispatch(message);
	host.orphans.flush(documentId);
}

/**
 * An unconfirmed link of the holder's own account: a resume naming a session its attached link holds shows
 * that link is dead, so it is closed as the drop it is, its work kept and given to this one. Anything else is
 * refused planner-attached, and the attached link is untouched.
 */
function takeover(
	host: PlannerParts,
	link: AgentLink,
	pending: Extract<Unconfirmed, { kind: "takeover" }>,
	message: Exclude<ClientMessage, Attach>,
): void {
	const documentId = pending.document.id;
	const ended = host.ends.get(documentId);
	if (ended && ended.n !== pending.ends) {
		link.refuse(ended.code, ended.message);
		return;
	}
	const { old } = pending;
	const names = message.type === "resume" && message.sessions.some((s) => old.sessions.get(s.session)?.live);
	if (!names || host.attached.get(documentId) !== old) {
		link.refuse("planner-attached", wording.plannerAttached(old.login));
		return;
	}
	old.link.close({ code: CLOSE_CODES.unresponsive, reason: "replaced by its own resume", kind: "dropped" });
	const { principal } = link;
	const acquired = host.ownership.acquire(documentId, {
		login: principal.login,
		kind: principal.kind,
		linkId: link.id,
		...(pending.check.signInSessionId && { signInSessionId: pending.check.signInSessionId }),
		...(principal.machineId && { machineId: principal.machineId }),
	});
	if (!acquired.ok) {
		link.refuse("planner-attached", acquired.message);
		return;
	}
	host.bind(link, pending.document, pending.check);
	const hold = host.held.get(documentId);
	host.deps.log.info("agent link took over its own dropped link", { link: link.id, document: documentId });
	confirm(host, link, hold ? { kind: "hold", hold } : { kind: "fresh" }, message);
	if (principal.kind === "machine") host.starter()?.attached(documentId);
	host.waiters.wake(documentId);
}
