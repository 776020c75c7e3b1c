// An attached link as the document's Planner: its sessions, turns, questions, runs and Stop/Resume, the
// messages it receives dispatched to them, the 5-minute access recheck, and everything it holds ended on close.
// A resumable link that drops keeps its work here, disconnected, until the same client resumes it on a new link
// (see resume.ts) or something explicit ends it.
import type { Attach, ClientMessage, ResponseFormat, Resume, ServerMessage } from "@chopin/agent-link";
import type { Timer } from "@chopin/agent-link/clock";
import type { StoredAttachment } from "../chat/attachment-rows";
import { type AccessVerdict, accessDeps, checkAccess, type OwnerRef } from "./access";
import { ReportedCatalog } from "./catalog";
import type { ComposerModels } from "./composer-model";
import { Controls } from "./control";
import { type AgentDeps, RECHECK_EVERY_MS } from "./deps";
import type { ForkPoint } from "./fork-points";
import type { Hold } from "./holds";
import type { AgentLink } from "./link";
import { Questions } from "./questions";
import { RememberedIds } from "./request-ids";
import { RunReports } from "./runs";
import { type PlannerSession, type SessionMode, SessionTable } from "./sessions";
import { Steers } from "./steers";
import type { HostToolContext } from "./tools/registry";
import { offeredTools } from "./tools/registry";
import { turnFrame } from "./turn-frame";
import { PlannerTurn, type TurnOutcome, type TurnSink } from "./turns";
import { wording } from "./wording";

export interface AttachedDocument {
	id: string;
	title: string;
	repository: string;
	url: string;
}

export interface TurnInput {
	prompt: string;
	instructions?: string;
	responseFormat?: ResponseFormat;
	/** The Chat message a person sent that began the turn; sent as turn.message only with retry-turn. */
	message?: string;
	/** The turn runs message again after a failed one (retry-turn). */
	retry?: boolean;
	/** The model and level a person chose, checked against the catalog; absent: the operator's MODEL alone. */
	choice?: { model?: string; thinkingLevel?: string };
	/** The files the message carries, in the order sent (attachments; written into the prompt without it). */
	attachments?: readonly StoredAttachment[];
}

export class AttachedPlanner {
	readonly sessions: SessionTable;
	readonly questions: Questions;
	readonly runs: RunReports;
	readonly controls: Controls;
	readonly steers: Steers;
	/** The running turn that answers a Chat message, and its thread: an @chopin message there steers it (steer-turn). */
	chatTurn: { turn: PlannerTurn; thread: string | undefined } | undefined;
	/** A Chat turn is reserved or running: another @chopin message is refused. */
	busy = false;
	/** Sessions being prepared for a turn, which must not be ended as idle meanwhile. */
	readonly #claimed = new Set<PlannerSession>();
	readonly #work = new Set<Promise<unknown>>();
	/** Turns the client ended with turn-end, the last 1,024: a second turn-end for one is a protocol violation. */
	readonly #clientEnded = new RememberedIds();
	#recheck: Timer | undefined;
	#state: "attached" | "disconnected" | "ended" = "attached";
	#rechecking = false;
	#link: AgentLink;
	/** The capability catalog the client reported last (capability-catalog), held with the link only. */
	catalog: ReportedCatalog | undefined;
	/** Set by the Planner service: told when the catalog changes, and asked for a turn's model. */
	composer: ComposerModels | undefined;

	constructor(
		link: AgentLink,
		readonly document: AttachedDocument,
		readonly owner: OwnerRef,
		readonly deps: AgentDeps,
		/** The Planner's state for pages changed (busy or idle). */
		private readonly statusChanged: () => void,
	) {
		this.#link = link;
		const self = this;
		const host = {
			documentId: document.id,
			domain: deps.domain,
			clock: deps.clock,
			log: deps.log,
			send: (message: ServerMessage) => this.send(message),
		};
		this.sessions = new SessionTable({
			clock: deps.clock,
			send: (message) => this.send(message),
			sessionEnded: (session, notify) => this.#sessionEnded(session, notify),
		});
		this.questions = new Questions({
			...host,
			get requestIds() {
				return self.link.requestIds;
			},
			get resumable() {
				return self.resumable;
			},
			rootPaused: (session, root) => this.runs.paused(session).includes(root),
			questionEnded: (session) => this.#maybeEndSession(session),
			keepsPreviews: () => link.features.has("decision-option-previews"),
		});
		this.runs = new RunReports({
			...host,
			reported: (session) => {
				this.questions.releaseHeld(session);
				this.#maybeEndSession(session);
			},
		});
		this.controls = new Controls(host);
		this.steers = new Steers(host);
		this.#armRecheck();
	}

	get login(): string {
		return this.owner.principal.login;
	}

	/** The link it answers on now: after a drop the closed one, after a resume the new one. */
	get link(): AgentLink {
		return this.#link;
	}

	/** A restart's hold: until when a resume may wait for the owner's browser sign-in (none: it may not). */
	signInBy: number | undefined;

	/** Whether its link offered resumable-sessions and attached granted it. */
	get resumable(): boolean {
		return this.#link.features.has("resumable-sessions");
	}

	/** Who holds the document through it, as Ownership keeps it. */
	ownerOf(): { login: string; kind: "account" | "machine"; machineId?: string } {
		const { principal } = this.owner;
		return {
			login: principal.login,
			kind: principal.kind,
			...(principal.machineId && { machineId: principal.machineId }),
		};
	}

	/** Its link dropped and its work is kept for the client's return. */
	get disconnected(): boolean {
		return this.#state === "disconnected";
	}

	/** Sends on the link; false once it has closed. */
	send(message: ServerMessage): boolean {
		return this.link.send(message);
	}

	/** Checks access now; a definitive loss refuses and closes the link (the caller's request fails). */
	async guard(): Promise<AccessVerdict> {
		const verdict = await checkAccess(accessDeps(this.deps), this.owner);
		if (!verdict.ok && verdict.code !== "unavailable") this.link.refuse(verdict.code, verdict.message);
		return verdict;
	}

	/** A session held for the caller's turn until release(). */
	claim(session: PlannerSession): void {
		this.#claimed.add(session);
	}

	release(session: PlannerSession): void {
		this.#claimed.delete(session);
		this.#maybeEndSession(session);
	}

	/** Sends a turn on a started session; the turn ends at once, failed, when the link cannot take it. */
	runTurn(session: PlannerSession, input: TurnInput, sink: TurnSink): PlannerTurn {
		const tools = offeredTools(session.mode, this.link.features);
		const turn = new PlannerTurn(session, `t-${crypto.randomUUID()}`, tools, sink, {
			clock: this.deps.clock,
			log: this.deps.log,
			send: (message) => this.send(message),
			violation: (message) => this.link.fail("protocol", message),
			checkAccess: () => checkAccess(accessDeps(this.deps), this.owner),
			toolContext: (signal) => this.#toolContext(signal),
			turnEnded: (ended, outcome) => this.#turnEnded(ended, outcome),
		});
		session.turns.set(turn.id, turn);
		session.current = turn;
		let sent = false;
		try {
			const { features } = this.link;
			sent = this.send(
				turnFrame(session.id, turn.id, tools, input, features, this.deps.config.model, this.catalog),
			);
		} catch (error) {
			this.deps.log.error("turn not sent", { error });
		}
		if (!sent) turn.end({ status: "failed", message: wording.turnClosed() });
		return turn;
	}

	/** Starts a session for a turn, or forks one from `from` (session-forks); rejects StartFailed if refused or unanswered. */
	startSession(mode: SessionMode, from?: ForkPoint): Promise<PlannerSession> {
		if (from && !this.link.features.has("session-forks")) throw new Error("fork without session-forks");
		return this.sessions.start(mode, from);
	}

	/** A message after attached. */
	dispatch(message: Exclude<ClientMessage, Attach>): void {
		switch (message.type) {
			case "started":
				this.sessions.started(message.session);
				break;
			case "start-failed":
				this.sessions.startFailed(message.session, message.message);
				break;
			case "tools":
				this.#turn(message.session, message.turn)?.declare(message.names);
				break;
			case "part":
				this.#turn(message.session, message.turn)?.part(message);
				break;
			case "turn-end": {
				const key = `${message.session}\u0000${message.turn}`;
				const turn = this.#turn(message.session, message.turn, true);
				if (!this.#clientEnded.receive(key)) {
					this.link.fail(
						"protocol",
						`The turn ${message.turn} already ended with turn-end: every turn has exactly one.`,
					);
					return;
				}
				this.#clientEnded.settle(key);
				turn?.clientEnd(message);
				break;
			}
			case "host-tool-call": {
				const session = this.sessions.get(message.session);
				const turn = session?.turns.get(message.turn);
				if (!session?.live || !turn) {
					const error = session?.live ? wording.turnEndedForTool() : wording.sessionEndedForTool();
					this.send({
						type: "host-tool-result",
						session: message.session,
						turn: message.turn,
						toolCallId: message.toolCallId,
						output: { error },
						isError: true,
					});
					return;
				}
				turn.hostCall(message);
				return;
			}
			case "input-request": {
				if (!this.link.requestIds.receive(message.request)) {
					this.link.fail("protocol", `The request id ${message.request} was used before on this connection.`);
					return;
				}
				const session = this.sessions.get(message.session);
				// A question for a session that has ended is ignored, as every message for one is.
				if (session?.live) this.questions.request(message, session);
				else this.link.requestIds.settle(message.request);
				return;
			}
			case "input-cancel":
				this.questions.cancel(message.request);
				break;
			case "runs": {
				const session = this.sessions.get(message.session);
				if (session?.live) this.runs.report(session, message);
				return;
			}
			case "control-result":
				// A steer's answer, or else a stop's or resume's: request ids are never shared.
				if (!this.steers.result(message)) this.controls.result(message);
				break;
			case "capabilities":
				// Each report replaces the last whole; parse refused it unless capability-catalog was granted.
				this.catalog = ReportedCatalog.read(message.catalog, this.deps.log, this.link.id);
				void this.composer?.publish(this.document.id);
				return;
			case "detach":
				this.link.close({ code: 1000, reason: "detach", kind: "detach" });
				return;
			case "input-received":
				this.questions.received(message.request);
				return;
			case "resume":
				this.link.fail("protocol", "resume is the first message after attached, or not sent at all.");
				return;
			default:
				// Nothing else reaches here: parse refuses what a feature this link did not negotiate allows.
				return;
		}
	}

	/** The turn running now, if any (at most one Chat turn at a time). */
	runningTurns(): PlannerTurn[] {
		return this.sessions
			.live()
			.map((s) => s.current)
			.filter((t): t is PlannerTurn => t !== undefined);
	}

	/** Resolves once the checks and withdrawals under way have finished (tests, a graceful stop). */
	async settled(): Promise<void> {
		while (this.#work.size) await Promise.allSettled([...this.#work]);
		await this.runs.settled();
	}

	/**
	 * The resumable link dropped (or the server is restarting): the turn under way fails, and each started
	 * session with a live or paused run, or a question open or answered and not acknowledged, is kept as it
	 * was; the others end. False when nothing is kept: the caller tears it down as any closed link.
	 */
	suspend(): boolean {
		if (this.#state !== "attached") return false;
		for (const session of this.sessions.live()) {
			session.current?.end({ status: "failed", message: wording.turnClosed() });
		}
		const kept = this.sessions.live().filter((s) => s.state === "started" && this.#keeps(s));
		if (kept.length === 0) return false;
		this.#state = "disconnected";
		this.#recheck?.cancel();
		this.busy = false;
		this.#claimed.clear();
		this.controls.dropped();
		for (const session of this.sessions.live()) {
			if (kept.includes(session)) continue;
			this.sessions.destroy(session, false);
			this.#track(this.runs.stopSession(session.id));
		}
		this.#track(
			this.deps.domain.runs.setDisconnected(
				this.document.id,
				kept.map((s) => s.id),
				true,
			),
		);
		return true;
	}

	/**
	 * The same client's resume on a new link: the sessions it names that are kept come back with the requests
	 * it still waits on; whatever it does not name ends. Sends resumed, then every Stop still owed, then every
	 * answer not acknowledged. Returns the Decisions whose answers a session it did not name never got.
	 */
	resume(link: AgentLink, message: Resume): string[] {
		this.#link = link;
		this.#state = "attached";
		const named = new Map(message.sessions.map((s) => [s.session, new Set(s.requests)]));
		const back: { session: string; requests: string[] }[] = [];
		const orphaned: string[] = [];
		for (const session of this.sessions.live()) {
			const requests = named.get(session.id);
			if (!requests) {
				orphaned.push(...this.questions.unackedAnswers(session));
				this.sessions.destroy(session, false);
				this.#track(this.runs.stopSession(session.id));
				continue;
			}
			back.push({ session: session.id, requests: this.questions.resumeSession(session, requests) });
		}
		const ids = new Set(back.map((b) => b.session));
		this.#track(this.deps.domain.runs.setDisconnected(this.document.id, [...ids], false));
		this.send({ type: "resumed", sessions: back });
		this.controls.resendOwed(ids);
		for (const session of this.sessions.live()) this.questions.redeliver(session);
		this.#armRecheck();
		for (const session of this.sessions.live()) this.#maybeEndSession(session);
		this.statusChanged();
		return orphaned;
	}

	/** What a restart carries over of its kept sessions (see holds.ts). */
	record(): Hold {
		return {
			sessions: this.sessions.live().map((session) => ({
				session: session.id,
				runs: session.holdsRuns,
				requests: this.questions.record(session),
			})),
			stops: this.controls.owed(),
		};
	}

	/**
	 * Rebuilds what another process's link kept (a planner_link_holds row), disconnected, for this link's
	 * resume: the sessions, each question open or, answered meanwhile, its result to deliver, and owed Stops.
	 */
	async restore(hold: Hold): Promise<void> {
		for (const kept of hold.sessions) {
			const session = this.sessions.adopt(kept.session);
			session.holdsRuns = kept.runs;
			this.runs.adopt(kept.session);
			for (const asked of kept.requests) {
				const decision = await this.deps.domain.decisions.get(asked.decisionId).catch(() => undefined);
				if (!decision) continue;
				this.questions.restore(session, asked, decision.status === "open" ? null : decision.result);
			}
		}
		this.controls.restoreOwed(hold.stops);
		this.#state = "disconnected";
		this.#recheck?.cancel();
	}

	/** The link closed: turns fail, sessions end, questions and their Decisions are withdrawn, live runs stop. */
	teardown(options: { withdraw?: boolean } = {}): Promise<void> {
		if (this.#state === "ended") return Promise.resolve();
		const withdraw = options.withdraw ?? true;
		const wasDisconnected = this.#state === "disconnected";
		this.#state = "ended";
		if (wasDisconnected) {
			const sessions = this.sessions.live().map((s) => s.id);
			this.#track(this.deps.domain.runs.setDisconnected(this.document.id, sessions, false));
		}
		this.#recheck?.cancel();
		this.controls.closeAll();
		this.steers.closeAll();
		// A server handing over withdraws nothing on the way out: the Decisions stay open in the document.
		if (!withdraw) this.questions.forget();
		this.sessions.closeAll();
		const done = (async () => {
			await Promise.allSettled([...this.#work]);
			if (withdraw) await this.questions.closeAll();
			await this.runs.stopAll();
		})();
		return done.catch((error: unknown) => this.deps.log.error("agent teardown failed", { error }));
	}

	#turn(sessionId: string, turnId: string, ended = false): PlannerTurn | undefined {
		const session = this.sessions.get(sessionId);
		const turn = session?.turns.get(turnId);
		// Messages for a turn or session that ended are ignored; a turn-end still counts once per turn.
		if (!turn || (!ended && (!session?.live || turn.state === "ended"))) return undefined;
		return turn;
	}

	#sessionEnded(session: PlannerSession, notify: boolean): void {
		session.current?.end({
			status: "failed",
			message: notify ? wording.sessionEndedForTool() : wording.turnClosed(),
		});
		this.#claimed.delete(session);
		this.controls.forget(session.id);
		this.#track(this.questions.endSession(session));
		if (notify) this.#track(this.runs.stopSession(session.id));
	}

	/** What keeps a session across a drop: a live or paused run, or a question the client still holds. */
	#keeps(session: PlannerSession): boolean {
		return session.mode === "planner" && (session.holdsRuns || this.questions.openIn(session) > 0);
	}

	#turnEnded(turn: PlannerTurn, _outcome: TurnOutcome): void {
		this.#maybeEndSession(turn.session);
	}

	/** A Planner session is kept while it runs a turn, holds live or paused runs, or waits on a question. */
	#maybeEndSession(session: PlannerSession): void {
		if (this.#state !== "attached" || session.state !== "started" || session.mode !== "planner") return;
		if (session.current || session.holdsRuns || this.#claimed.has(session)) return;
		if (this.questions.openIn(session) > 0) return;
		this.sessions.destroy(session);
	}

	#toolContext(signal: AbortSignal): HostToolContext {
		return {
			documentId: this.document.id,
			repository: this.document.repository,
			publicUrl: this.deps.config.publicUrl,
			domain: this.deps.domain,
			signal,
		};
	}

	#armRecheck(): void {
		if (this.#state !== "attached") return;
		this.#recheck = this.deps.clock.setTimeout(() => {
			if (this.#state !== "attached") return;
			// Every 5 minutes on the clock, however long a check takes; a GitHub outage leaves the link open.
			this.#armRecheck();
			if (this.#rechecking) return;
			this.#rechecking = true;
			this.#track(this.guard().finally(() => (this.#rechecking = false)));
		}, RECHECK_EVERY_MS);
	}

	#track(work: Promise<unknown>): void {
		const tracked = work.catch((error: unknown) => this.deps.log.error("agent work failed", { error }));
		this.#work.add(tracked);
		void tracked.finally(() => this.#work.delete(tracked));
	}

	/** For planner-service: the Planner is idle again after a Chat turn. */
	idle(): void {
		this.busy = false;
		this.statusChanged();
	}
}
