// An attached link as the document's Planner: its sessions, turns, questions, runs and Stop/Resume, the
// messages it receives dispatched to them, the 5-minute access recheck, and everything it holds ended on close.
import type { Attach, ClientMessage, ResponseFormat, ServerMessage } from "@chopin/agent-link";
import type { Timer } from "@chopin/agent-link/clock";
import { type AccessVerdict, accessDeps, checkAccess, type OwnerRef } from "./access";
import { ReportedCatalog } from "./catalog";
import type { ComposerModels } from "./composer-model";
import { Controls } from "./control";
import { type AgentDeps, RECHECK_EVERY_MS } from "./deps";
import type { AgentLink } from "./link";
import { Questions } from "./questions";
import { RememberedIds } from "./request-ids";
import { RunReports } from "./runs";
import { type PlannerSession, type SessionMode, SessionTable } from "./sessions";
import type { HostToolContext } from "./tools/registry";
import { offeredTools } from "./tools/registry";
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
	/** The model and level a person chose, checked against the catalog; absent: the operator's MODEL alone. */
	choice?: { model?: string; thinkingLevel?: string };
}

export class AttachedPlanner {
	readonly sessions: SessionTable;
	readonly questions: Questions;
	readonly runs: RunReports;
	readonly controls: Controls;
	/** A Chat turn is reserved or running: another @chopin message is refused. */
	busy = false;
	/** Sessions being prepared for a turn, which must not be ended as idle meanwhile. */
	readonly #claimed = new Set<PlannerSession>();
	readonly #work = new Set<Promise<unknown>>();
	/** Turns the client ended with turn-end, the last 1,024: a second turn-end for one is a protocol violation. */
	readonly #clientEnded = new RememberedIds();
	#recheck: Timer | undefined;
	#closed = false;
	#rechecking = false;
	/** The capability catalog the client reported last (capability-catalog), held with the link only. */
	catalog: ReportedCatalog | undefined;
	/** Set by the Planner service: told when the catalog changes, and asked for a turn's model. */
	composer: ComposerModels | undefined;

	constructor(
		readonly link: AgentLink,
		readonly document: AttachedDocument,
		readonly owner: OwnerRef,
		readonly deps: AgentDeps,
		/** The Planner's state for pages changed (busy or idle). */
		private readonly statusChanged: () => void,
	) {
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
			requestIds: link.requestIds,
			rootPaused: (session, root) => this.runs.paused(session).includes(root),
			questionEnded: (session) => this.#maybeEndSession(session),
		});
		this.runs = new RunReports({
			...host,
			reported: (session) => {
				this.questions.releaseHeld(session);
				this.#maybeEndSession(session);
			},
		});
		this.controls = new Controls(host);
		this.#armRecheck();
	}

	get login(): string {
		return this.owner.principal.login;
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
		const tools = offeredTools(session.mode);
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
		const model = input.choice ? input.choice.model : this.deps.config.model;
		// thinkingLevel is gated: a client that did not ask for capability-catalog never gets it.
		const thinkingLevel = this.link.features.has("capability-catalog")
			? input.choice?.thinkingLevel
			: undefined;
		let sent = false;
		try {
			sent = this.send({
				type: "turn",
				session: session.id,
				turn: turn.id,
				prompt: input.prompt,
				...(input.instructions !== undefined && { instructions: input.instructions }),
				...(model && { model }),
				...(thinkingLevel && { thinkingLevel }),
				tools,
				...(input.responseFormat && { responseFormat: input.responseFormat }),
			});
		} catch (error) {
			this.deps.log.error("turn not sent", { error });
		}
		if (!sent) turn.end({ status: "failed", message: wording.turnClosed() });
		return turn;
	}

	/** Starts a session for a turn; rejects StartFailed when the client refuses or does not answer. */
	startSession(mode: SessionMode): Promise<PlannerSession> {
		return this.sessions.start(mode);
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
				this.controls.result(message);
				break;
			case "capabilities":
				// Each report replaces the last whole; parse refused it unless capability-catalog was granted.
				this.catalog = ReportedCatalog.read(message.catalog, this.deps.log, this.link.id);
				void this.composer?.publish(this.document.id);
				return;
			case "detach":
				this.link.close({ code: 1000, reason: "detach", ownership: "grace" });
				return;
			default:
				// resume and input-received need features this server never grants: parse refused them.
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
	}

	/** The link closed: turns fail, sessions end, questions and their Decisions are withdrawn, live runs stop. */
	teardown(): Promise<void> {
		if (this.#closed) return Promise.resolve();
		this.#closed = true;
		this.#recheck?.cancel();
		this.controls.closeAll();
		this.sessions.closeAll();
		const done = (async () => {
			await Promise.allSettled([...this.#work]);
			await this.questions.closeAll();
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
		this.#track(this.questions.endSession(session));
		if (notify) this.#track(this.runs.stopSession(session.id));
	}

	#turnEnded(turn: PlannerTurn, _outcome: TurnOutcome): void {
		this.#maybeEndSession(turn.session);
	}

	/** A Planner session is kept while it runs a turn, holds live or paused runs, or waits on a question. */
	#maybeEndSession(session: PlannerSession): void {
		if (this.#closed || session.state !== "started" || session.mode !== "planner") return;
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
		if (this.#closed) return;
		this.#recheck = this.deps.clock.setTimeout(() => {
			if (this.#closed) return;
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
