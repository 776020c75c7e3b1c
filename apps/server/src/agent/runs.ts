// runs reports: each is applied in order to the session's run cards (runs/service.ts), which the document page
// shows; when the link closes, the live runs it reported are shown stopped.
import type { Runs } from "@chopin/agent-link";
import type { Domain } from "../domain";
import type { Logger } from "../log";
import type { PlannerSession } from "./sessions";

export interface RunsHost {
	readonly documentId: string;
	readonly domain: Domain;
	readonly log: Logger;
	/** After a report is stored: held answers may go out, an idle session may end. */
	reported(session: PlannerSession): void;
}

export class RunReports {
	/** The tail of each session's reports, so they apply in the order received. */
	readonly #chains = new Map<string, Promise<void>>();

	constructor(private readonly host: RunsHost) {}

	report(session: PlannerSession, message: Runs): void {
		const { type: _type, session: _session, ...report } = message;
		// Known at once, so a turn ending right after its report keeps the session.
		session.holdsRuns = report.active.length + report.paused.length > 0;
		const previous = this.#chains.get(session.id) ?? Promise.resolve();
		const next = previous.then(async () => {
			try {
				await this.host.domain.runs.apply(this.host.documentId, session.id, report);
			} catch (error) {
				this.host.log.error("runs report not applied", { error, session: session.id });
			}
			this.host.reported(session);
		});
		this.#chains.set(session.id, next);
	}

	/** A session carried over by a restart: its stored runs show stopped if it ends without being resumed. */
	adopt(sessionId: string): void {
		if (!this.#chains.has(sessionId)) this.#chains.set(sessionId, Promise.resolve());
	}

	/** Resolves once every report received so far is stored (or failed and was logged). */
	async settled(): Promise<void> {
		await Promise.all(this.#chains.values());
	}

	/** Roots the session's latest stored report lists as paused. */
	paused(session: PlannerSession): string[] {
		return this.host.domain.runs.roots(this.host.documentId, session.id).paused;
	}

	/** The session ended without the link keeping it: its live runs show stopped. */
	async stopSession(sessionId: string): Promise<void> {
		const chain = this.#chains.get(sessionId);
		if (!chain) return;
		await chain;
		this.#chains.delete(sessionId);
		try {
			await this.host.domain.runs.stopLiveRuns(this.host.documentId, sessionId);
		} catch (error) {
			this.host.log.error("stopping live runs failed", { error, session: sessionId });
		}
	}

	/** The link closed: every session's live runs show stopped. */
	async stopAll(): Promise<void> {
		await Promise.all([...this.#chains.keys()].map((id) => this.stopSession(id)));
	}
}
