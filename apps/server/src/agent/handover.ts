// The restart hand-over (spec: After a server restart), in github mode: each resumable Planner hold is written to
// planner_link_holds when its link drops and at a graceful stop's cut; the next process rebuilds every row as a
// suspended hold with its HANDOVER_PLANNER_WINDOW_MS window (shown attached meanwhile), shows it disconnected
// when the window ends with no resume, and gives it to the same account's link that attaches. Under
// AUTH_MODE=local nothing is handed over.
import type { Timer } from "@chopin/agent-link/clock";
import type { AttachedPlanner } from "./attached";
import type { AgentDeps } from "./deps";
import { type HoldRecord, HoldsStore } from "./holds";
import type { AgentLink } from "./link";
import type { Ownership } from "./ownership";

export interface HandoverHost {
	readonly deps: AgentDeps;
	readonly ownership: Ownership;
	/** The Planner's state for pages changed. */
	publish(documentId: string): void;
	/** Background work stop() and settled() wait for. */
	track(work: Promise<void>): void;
}

interface Restored {
	record: HoldRecord;
	/** Set while its hand-over window runs, with when it ends. */
	timer?: Timer;
	until?: number;
}

export class Handover {
	readonly #store: HoldsStore;
	/** Per document: a hold the last process wrote, rebuilt here until its client attaches. */
	readonly #restored = new Map<string, Restored>();

	constructor(private readonly host: HandoverHost) {
		this.#store = new HoldsStore(host.deps.store, () => host.deps.clock.now());
	}

	/** Whether a restart hands Planner links over (github mode; AUTH_MODE=local never does). */
	get enabled(): boolean {
		return this.host.deps.config.authMode === "github";
	}

	/** Whether the document's restored hold is inside its window (members see the Planner attached). */
	inWindow(documentId: string): boolean {
		return this.#restored.get(documentId)?.timer !== undefined;
	}

	/** The account whose restored hold (not yet taken by its client) the document keeps, if any. */
	restoredLogin(documentId: string): string | undefined {
		return this.#restored.get(documentId)?.record.login;
	}

	/** Whether a restored hold (not yet taken by its client) waits on the Decision. */
	holdsDecision(documentId: string, decisionId: string): boolean {
		const restored = this.#restored.get(documentId);
		return !!restored?.record.hold.sessions.some((s) => s.requests.some((r) => r.decisionId === decisionId));
	}

	/** Start-up: every row becomes a suspended hold, the account holding the document, disconnected. */
	async restoreAll(): Promise<void> {
		if (!this.enabled) return;
		const { deps, ownership } = this.host;
		const windowMs = deps.config.handoverPlannerWindowMs;
		for (const record of await this.#store.all()) {
			// Rewritten without the window: a crash of this process leaves the next one a disconnected hold.
			await this.#store.write({ ...record, handover: false });
			ownership.hold(record.documentId, {
				login: record.login,
				kind: record.kind,
				...(record.machineId && { machineId: record.machineId }),
			});
			const restored: Restored = { record };
			this.#restored.set(record.documentId, restored);
			if (record.handover && windowMs > 0) {
				restored.timer = deps.clock.setTimeout(() => this.#missed(record.documentId), windowMs);
				restored.until = deps.clock.now() + windowMs;
			} else {
				this.#showDisconnected(record);
			}
			this.host.publish(record.documentId);
		}
		if (this.#restored.size > 0) deps.log.info("planner holds rebuilt", { count: this.#restored.size });
	}

	/**
	 * The same account attached over a restored hold: it is rebuilt on the link (by `make`) as the document's
	 * disconnected Planner, for the link's first message to resume or end. Undefined when there is none.
	 */
	async take(
		link: AgentLink,
		documentId: string,
		make: () => AttachedPlanner,
	): Promise<AttachedPlanner | undefined> {
		const restored = this.#restored.get(documentId);
		if (!restored || restored.record.login.toLowerCase() !== link.principal.login.toLowerCase())
			return undefined;
		this.#restored.delete(documentId);
		restored.timer?.cancel();
		const hold = make();
		// A resume on it may wait for the owner's browser sign-in until the window ends, and no longer.
		if (restored.timer && restored.until !== undefined) hold.signInBy = restored.until;
		try {
			await hold.restore(restored.record.hold);
		} catch (error) {
			this.host.deps.log.error("planner hold not rebuilt", { error, document: documentId });
			return undefined;
		}
		return hold;
	}

	/** A restored hold ended before its client came back: its questions withdrawn, its runs shown stopped. */
	endRestored(documentId: string): void {
		const restored = this.#restored.get(documentId);
		if (!restored) return;
		this.#restored.delete(documentId);
		restored.timer?.cancel();
		const { domain, log } = this.host.deps;
		const work = (async () => {
			for (const session of restored.record.hold.sessions) {
				for (const asked of session.requests)
					await domain.decisions.withdraw(asked.decisionId).catch(() => {});
				await domain.runs.setDisconnected(documentId, [session.session], false);
				await domain.runs.stopLiveRuns(documentId, session.session);
			}
			await this.#store.remove(documentId);
		})().catch((error: unknown) =>
			log.error("ending a restored hold failed", { error, document: documentId }),
		);
		this.host.track(work);
	}

	/**
	 * Stop or Resume pressed on a restored hold its client has not taken: a Stop is owed to every session
	 * (written to the row, sent first after resumed); a Resume is not held. Stop on a hold that only waits on
	 * questions withdraws them and ends it ("withdrawn"). Null when the document has no restored hold.
	 */
	press(documentId: string, action: "stop" | "resume", by: string): "owed" | "not-held" | "withdrawn" | null {
		const restored = this.#restored.get(documentId);
		if (!restored) return null;
		if (action === "resume") return "not-held";
		const { hold } = restored.record;
		if (hold.sessions.every((s) => !s.runs)) {
			this.endRestored(documentId);
			return "withdrawn";
		}
		const others = hold.stops.filter((stop) => !hold.sessions.some((s) => s.session === stop.session));
		const stops = hold.sessions.map((s) => ({ session: s.session, by, all: true, runs: [] }));
		restored.record = { ...restored.record, hold: { ...hold, stops: [...others, ...stops] } };
		const record = { ...restored.record, handover: false };
		this.host.track(
			this.#store
				.write(record)
				.catch((error: unknown) =>
					this.host.deps.log.error("planner hold not written", { error, document: documentId }),
				),
		);
		return "owed";
	}

	/** Writes the hold's row in the background, logging a failure. */
	persist(held: AttachedPlanner, handover: boolean): void {
		if (this.enabled) this.host.track(this.write(held, handover));
	}

	/** Writes the hold's row now (a stop waits for it). */
	async write(held: AttachedPlanner, handover: boolean): Promise<void> {
		if (!this.enabled) return;
		const { principal } = held.owner;
		try {
			await this.#store.write({
				documentId: held.document.id,
				login: principal.login,
				kind: principal.kind,
				...(principal.machineId && { machineId: principal.machineId }),
				...(held.owner.signInSessionId && { signInSessionId: held.owner.signInSessionId }),
				hold: held.record(),
				handover,
			});
		} catch (error) {
			this.host.deps.log.error("planner hold not written", { error, document: held.document.id });
		}
	}

	/** The row of a hold that ended or resumed. */
	forget(documentId: string): void {
		if (!this.enabled) return;
		this.host.track(
			this.#store
				.remove(documentId)
				.catch((error: unknown) =>
					this.host.deps.log.error("planner hold not removed", { error, document: documentId }),
				),
		);
	}

	/**
	 * The server is stopping, its links closed. Handing over, every hold is written for the next process: one
	 * live at the cut with its window, one already dropped as it was; nothing is withdrawn. Otherwise each is
	 * ended (`end`). Restored holds keep their rows as they are (already without a window).
	 */
	async stop(
		held: Iterable<AttachedPlanner>,
		liveAtCut: ReadonlySet<AttachedPlanner>,
		end: (held: AttachedPlanner) => void,
	): Promise<void> {
		if (this.enabled) await Promise.allSettled([...held].map((h) => this.write(h, liveAtCut.has(h))));
		else for (const h of held) end(h);
		for (const restored of this.#restored.values()) restored.timer?.cancel();
		this.#restored.clear();
	}

	/** The window ended with no resume: the hold is disconnected, as a dropped link is, and stays. */
	#missed(documentId: string): void {
		const restored = this.#restored.get(documentId);
		if (!restored) return;
		restored.timer = undefined;
		this.host.deps.log.info("planner hand-over missed", {
			document: documentId,
			login: restored.record.login,
			cause: "the client did not come back within the window",
		});
		this.#showDisconnected(restored.record);
		this.host.publish(documentId);
	}

	#showDisconnected(record: HoldRecord): void {
		const sessions = record.hold.sessions.map((s) => s.session);
		this.host.deps.domain.runs
			.setDisconnected(record.documentId, sessions, true)
			.catch((error: unknown) => this.host.deps.log.error("run cards not marked disconnected", { error }));
	}
}
