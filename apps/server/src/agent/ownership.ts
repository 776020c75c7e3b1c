// Who holds each document's Planner, in this process's memory (a restart releases everything): one attached
// link at a time, and after a detach or a drop a grace period during which only the same account may attach.
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
	| (Owner & { state: "grace"; until: number; timer: Timer });

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
		this.#holders.set(documentId, { ...owner, state: "attached" });
		this.changed(documentId);
		return { ok: true };
	}

	/**
	 * The link's connection ended. "grace": its account keeps the document for the grace period
	 * (a detach, or a drop with nothing kept); "release": the ownership ends now (a sign-out, a
	 * reset, lost access). Nothing happens when the link is not the holder.
	 */
	leave(documentId: string, linkId: string, mode: "grace" | "release"): void {
		const held = this.#holders.get(documentId);
		if (held?.state !== "attached" || held.linkId !== linkId) return;
		const graceMs = this.graceMs();
		if (mode === "release" || graceMs === 0) {
			this.#holders.delete(documentId);
		} else {
			const until = this.clock.now() + graceMs;
			const timer = this.clock.setTimeout(() => {
				if (this.#holders.get(documentId) === entry) this.release(documentId);
			}, graceMs);
			const { linkId: _linkId, state: _state, ...owner } = held;
			const entry: Holder = { ...owner, state: "grace", until, timer };
			this.#holders.set(documentId, entry);
		}
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
