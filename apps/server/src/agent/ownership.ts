// Who holds each document's Planner, in this process's memory: one attached link at a time, after a detach or a
// drop with nothing kept a grace period during which only the same account may attach, and a resumable link
// that dropped with its work kept, disconnected, held for its account with no deadline.
import type { Clock, Timer } from "@chopin/agent-link/clock";
import { wording } from "./wording";

interface Owner {
	login: string;
	kind: "account" | "machine";
	/** The browser sign-in the ownership rests on (accounts); its end releases the ownership at once. */
	signInSessionId?: string;
	machineId?: string;
}

export type Holder =
	| (Owner & { state: "attached"; linkId: string })
	| (Owner & { state: "grace"; until: number; timer: Timer })
	| (Owner & { state: "disconnected" });

/** ok, and `replaces` names the link of the same machine it took the document from (that link is to be closed). */
export type Acquired = { ok: true; replaces?: string } | { ok: false; message: string };

export class Ownership {
	readonly #holders = new Map<string, Holder>();

	constructor(
		private readonly clock: Clock,
		/** PLANNER_ATTACH_GRACE_MS, read when a grace period starts. */
		private readonly graceMs: () => number,
		/** Called after every change of a document's holder. */
		private readonly changed: (documentId: string) => void,
	) {}

	holder(documentId: string): Holder | undefined {
		return this.#holders.get(documentId);
	}

	/** Every document with a holder (attached or in its grace period). */
	documents(): string[] {
		return [...this.#holders.keys()];
	}

	/**
	 * Makes `linkId` the document's Planner. Refused while another link is attached (whoever it
	 * belongs to), and during a grace period unless the same account returns, which keeps it. A
	 * machine's link replaces the same machine's attached one at once: that one is its own stale link
	 * (a backend that dropped unnoticed), which must not make it wait out the timeout and the grace.
	 */
	acquire(documentId: string, owner: Owner & { linkId: string }): Acquired {
		const held = this.#holders.get(documentId);
		if (held?.state === "attached") {
			if (owner.machineId === undefined || held.machineId !== owner.machineId) {
				return { ok: false, message: wording.plannerAttached(held.login) };
			}
			this.#holders.set(documentId, { ...owner, state: "attached" });
			this.changed(documentId);
			return { ok: true, replaces: held.linkId };
		}
		if (held?.state === "grace") {
			if (held.login.toLowerCase() !== owner.login.toLowerCase()) {
				return { ok: false, message: wording.plannerInGrace(held.login, held.until) };
			}
			held.timer.cancel();
		}
		if (held?.state === "disconnected" && held.login.toLowerCase() !== owner.login.toLowerCase()) {
			return { ok: false, message: wording.plannerDisconnected(held.login) };
		}
		this.#holders.set(documentId, { ...owner, state: "attached" });
		this.changed(documentId);
		return { ok: true };
	}

	/**
	 * The link's connection ended. "grace": its account keeps the document for the grace period
	 * (a detach, or a drop with nothing kept); "release": the ownership ends now (a sign-out, a
	 * reset, lost access). Nothing happens when the link is not the holder.
	 */
	leave(documentId: string, linkId: string | null, mode: "grace" | "release"): void {
		const held = this.#holders.get(documentId);
		// A disconnected hold (linkId null) whose work ended leaves as its link would have.
		const holds =
			linkId === null ? held?.state === "disconnected" : held?.state === "attached" && held.linkId === linkId;
		if (!held || !holds) return;
		const graceMs = this.graceMs();
		if (mode === "release" || graceMs === 0) {
			this.#holders.delete(documentId);
		} else {
			const until = this.clock.now() + graceMs;
			const timer = this.clock.setTimeout(() => {
				if (this.#holders.get(documentId) === entry) this.release(documentId);
			}, graceMs);
			const { state: _state, ...rest } = held;
			const { linkId: _linkId, ...owner } = rest as Owner & { linkId?: string };
			const entry: Holder = { ...owner, state: "grace", until, timer };
			this.#holders.set(documentId, entry);
		}
		this.changed(documentId);
	}

	/**
	 * The attached link dropped and its work is kept: its account holds the document, disconnected, with no
	 * grace period and no deadline, until it resumes or something explicit ends it.
	 */
	disconnect(documentId: string, linkId: string): void {
		const held = this.#holders.get(documentId);
		if (held?.state !== "attached" || held.linkId !== linkId) return;
		const { linkId: _linkId, state: _state, ...owner } = held;
		this.#holders.set(documentId, { ...owner, state: "disconnected" });
		this.changed(documentId);
	}

	/** The browser sign-in an attached ownership rests on, once it is back after a restart. */
	signIn(documentId: string, signInSessionId: string): void {
		const held = this.#holders.get(documentId);
		if (held?.state === "attached") held.signInSessionId = signInSessionId;
	}

	/** A hold the last process wrote, rebuilt at start-up: the account holds the document, disconnected. */
	hold(documentId: string, owner: Owner): void {
		this.#holders.set(documentId, { ...owner, state: "disconnected" });
		this.changed(documentId);
	}

	/** Ends a grace period (or any holding) at once; true when there was one. */
	release(documentId: string): boolean {
		const held = this.#holders.get(documentId);
		if (!held) return false;
		if (held.state === "grace") held.timer.cancel();
		this.#holders.delete(documentId);
		this.changed(documentId);
		return true;
	}

	/** Drops every holding and its timer (the server is stopping). */
	clear(): void {
		for (const held of this.#holders.values()) if (held.state === "grace") held.timer.cancel();
		this.#holders.clear();
	}
}
