// After a restart, a returning account's resume waits inside the hand-over window for the owner's browser sign-in,
// which the browser's cookie restores on the new process (spec: After a server restart). Once it is back the
// sign-in is checked as at attach; when the window is over without it the resume is refused unavailable with
// retry and the hold stays for the next try.
import type { Attach, ClientMessage, Resume } from "@chopin/agent-link";
import type { Clock } from "@chopin/agent-link/clock";
import type { Sessions } from "../auth/sessions";
import { checkSignIn } from "./attach";
import type { AttachedPlanner } from "./attached";
import { confirm, type PlannerParts, type Unconfirmed } from "./confirm";
import type { AgentLink } from "./link";
import { wording } from "./wording";

/**
 * Resolves true once `login` has a live sign-in on this process (at once when it has one), or false when `until`
 * (ms on the clock) passes first or is undefined or past.
 */
export function waitForSignIn(
	sessions: Sessions,
	clock: Clock,
	login: string,
	until?: number,
): Promise<boolean> {
	if (sessions.liveSignIn(login)) return Promise.resolve(true);
	const left = until === undefined ? 0 : until - clock.now();
	if (left <= 0) return Promise.resolve(false);
	return new Promise((resolve) => {
		const done = (back: boolean) => {
			off();
			timer.cancel();
			resolve(back);
		};
		const off = sessions.onSignIn((signIn) => {
			if (signIn.login.toLowerCase() === login.toLowerCase()) done(true);
		});
		const timer = clock.setTimeout(() => done(sessions.liveSignIn(login) !== null), left);
	});
}

/** Whether the document keeps a restart's hold of this link's account that may wait for its sign-in. */
/**
 * A message from a link whose resume may wait for the owner's sign-in: a resume starts the wait; what follows it
 * waits behind it; anything else first ends the hold and the link (it cannot be the Planner without a sign-in).
 * False when the link is not in that state (the caller handles the message).
 */
export function routeAwaitingSignIn(
	host: PlannerParts,
	link: AgentLink,
	pending: Unconfirmed | undefined,
	message: Exclude<ClientMessage, Attach>,
): boolean {
	if (pending?.kind === "waiting") {
		pending.queue.push(message);
		return true;
	}
	if (pending?.kind !== "hold" || !pending.awaitingSignIn) return false;
	if (message.type === "resume") {
		host.unconfirmed.set(link.id, { kind: "waiting", queue: [] });
		void resumeAfterSignIn(host, link, pending.hold, message);
		return true;
	}
	host.unconfirmed.delete(link.id);
	host.endHoldUnclaimed(pending.hold.document.id, pending.hold);
	link.refuse("sign-in-required", wording.signInRequired(link.principal.login, host.deps.config.publicUrl));
	return true;
}

export function awaitsSignIn(host: PlannerParts, documentId: string, link: AgentLink): boolean {
	if (!host.grants(link, "resumable-sessions")) return false;
	const login = link.principal.login.toLowerCase();
	if (host.handover.restoredLogin(documentId)?.toLowerCase() === login) return true;
	const held = host.held.get(documentId);
	return held !== undefined && held.login.toLowerCase() === login && held.owner.signInSessionId === undefined;
}

/**
 * A resume of a restart's hold sent before the owner's browser sign-in is back: it waits, inside the window,
 * nothing refused; once the sign-in is back (and passes the attach checks) the resume goes on, then whatever
 * came after it. With the window over and no sign-in it is refused unavailable with retry, the hold kept.
 */
export async function resumeAfterSignIn(
	host: PlannerParts,
	link: AgentLink,
	hold: AttachedPlanner,
	message: Resume,
): Promise<void> {
	const { sessions, clock } = host.deps;
	const documentId = hold.document.id;
	const back = await waitForSignIn(sessions, clock, link.principal.login, hold.signInBy);
	const waiting = host.unconfirmed.get(link.id);
	if (!link.open || waiting?.kind !== "waiting") return;
	host.unconfirmed.delete(link.id);
	if (!back) {
		host.deps.log.info("planner hand-over waits for the owner's sign-in", { document: documentId });
		link.refuse("unavailable", wording.unavailable(), "dropped");
		if (host.held.get(documentId) === hold) host.ownership.hold(documentId, hold.ownerOf());
		return;
	}
	const signIn = await checkSignIn(host.deps, link.principal.login, hold.document.repository);
	if (!link.open) return;
	if (!signIn.ok) {
		if (signIn.code !== "unavailable") host.endHold(documentId);
		link.refuse(signIn.code, signIn.message, signIn.code === "unavailable" ? "dropped" : "refused");
		if (signIn.code === "unavailable" && host.held.get(documentId) === hold) {
			host.ownership.hold(documentId, hold.ownerOf());
		}
		return;
	}
	for (const planner of [hold, host.byLink.get(link.id)]) {
		if (planner) planner.owner.signInSessionId = signIn.signInSessionId;
	}
	host.ownership.signIn(documentId, signIn.signInSessionId);
	confirm(host, link, { kind: "hold", hold }, message);
	for (const next of waiting.queue) host.receive(link, next);
}
