// The agent endpoint's service (ctx.planner, see planner-service.ts): the links open now, each document's
// Planner and its ownership, attach, the events that end an attachment (sign-out, reset, archive, delete),
// @chopin messages, Stop/Resume, and the planner.status live events.
import type { Attach, ClientMessage, Feature } from "@chopin/agent-link";
import type { SocketHandlers } from "../http/sockets";
import type { ChatModelState } from "../live/events";
import { type AttachCheck, checkAttach } from "./attach";
import { type AttachedDocument, AttachedPlanner } from "./attached";
import { handleChatMessage } from "./chat-message";
import { type ChooseResult, ComposerModels } from "./composer-model";
import { confirm, ownLink, type PlannerParts, type Unconfirmed } from "./confirm";
import type { ControlAction } from "./control";
import type { AgentDeps } from "./deps";
import { documentIdOf, documentUrl } from "./document-ref";
import { Endings } from "./endings";
import { Handover } from "./handover";
import { type InvokeInput, type InvokeResult, invokeTurn } from "./invoke";
import { type JobInput, type JobResult, runJob } from "./jobs";
import { AgentLink, type CloseCause, type LinkEvents } from "./link";
import { OrphanAnswers } from "./orphan-answers";
import { Ownership } from "./ownership";
import { pressControl } from "./planner-control";
import type {
	ChatMessageInput,
	LinkFilter,
	LinkStats,
	PlannerMessageResult,
	PlannerService,
	PlannerStarter,
	PlannerStatus,
} from "./planner-service";
import { accountResolver, BearerResolvers } from "./principal";
import { AttachWaiters, type ReserveDeps, reservePlanner } from "./reserve";
import { type RetryInput, type RetryResult, retryReply } from "./retry";
import { awaitsSignIn, routeAwaitingSignIn } from "./sign-in-wait";
import type { AgentSocketData } from "./upgrade";
import { wording } from "./wording";

/** The optional features this server implements; attached lists the requested ones among them. */
export const SUPPORTED_FEATURES: ReadonlySet<Feature> = new Set<Feature>([
	"run-stage-deltas",
	"resumable-sessions",
	"restart-notice",
	"decision-option-previews",
	"steer-turn",
	"retry-turn",
	"capability-catalog",
	"attachments",
	"session-forks",
]);

export class Planner implements PlannerService {
	readonly resolvers: BearerResolvers;
	readonly #ownership: Ownership;
	readonly #links = new Map<string, AgentLink>();
	readonly #attached = new Map<string, AttachedPlanner>();
	readonly #byLink = new Map<string, AttachedPlanner>();
	/** Per document: the Planner whose resumable link dropped with its work kept (disconnected). */
	readonly #held = new Map<string, AttachedPlanner>();
	/** Per link: attached, waiting for the first message that says whether it resumes. */
	readonly #unconfirmed = new Map<string, Unconfirmed>();
	/** The restart hand-over: planner_link_holds rows written and rebuilt (github mode). */
	readonly #handover: Handover;
	/** Answers no link waits on any more, each sent to the Planner once as a turn of its own. */
	readonly #orphans: OrphanAnswers;
	/** Per document: bumped by every explicit end, so an attach checked before it is refused after. */
	/** The explicit ends: sign-out, reset, revoked or withdrawn machines, archive and delete. */
	readonly #endings: Endings;
	readonly #teardowns = new Set<Promise<void>>();
	readonly #published = new Map<string, string>();
	readonly #unsubscribe: (() => void)[] = [];
	#starter: PlannerStarter | undefined;
	/** Per document: what waits for its Planner to attach (an @chopin message while a machine starts one). */
	readonly #waiters: AttachWaiters;
	readonly #reserve: ReserveDeps;
	readonly #parts: PlannerParts;
	/** The composer's models and the document's choice (capability-catalog). */
	readonly #composer: ComposerModels;

	constructor(private readonly deps: AgentDeps) {
		this.resolvers = new BearerResolvers(accountResolver(deps.identity));
		this.#waiters = new AttachWaiters(deps.clock);
		this.#composer = new ComposerModels(deps, (id) => this.#attached.get(id)?.catalog);
		this.#reserve = {
			deps,
			attached: (id) => this.#attached.get(id),
			holder: (id) => this.#ownership.holder(id),
			starter: () => this.#starter,
			waiters: this.#waiters,
			inHandover: (id) => this.#handover.inWindow(id),
			publish: (id) => this.#publish(id),
		};
		this.#ownership = new Ownership(
			deps.clock,
			() => deps.config.plannerAttachGraceMs,
			(id) => this.#publish(id),
		);
		this.#endings = new Endings({
			deps,
			ownership: this.#ownership,
			attached: (id) => this.#attached.get(id),
			endHold: (id) => this.#endHold(id),
		});
		this.#handover = new Handover({
			deps,
			ownership: this.#ownership,
			publish: (id) => this.#publish(id),
			track: (work) => this.#track(work),
		});
		const planner = this;
		this.#parts = {
			deps,
			ownership: this.#ownership,
			attached: this.#attached,
			byLink: this.#byLink,
			held: this.#held,
			ends: this.#endings.counts,
			get handover() {
				return planner.#handover;
			},
			get orphans() {
				return planner.#orphans;
			},
			waiters: this.#waiters,
			starter: () => this.#starter,
			bind: (link, attached, check) => this.#bind(link, attached, check),
			endHoldUnclaimed: (documentId, hold) => this.#endHoldUnclaimed(documentId, hold),
			teardown: (planner) => this.#teardown(planner),
			unconfirmed: this.#unconfirmed,
			endHold: (documentId) => this.#endHold(documentId),
			receive: (link, message) => this.#message(link, message),
			grants: (link, feature) => this.#grants(link, feature),
		};
		this.#orphans = new OrphanAnswers({
			deps,
			ready: (id) => {
				// Not while its first message may still take back (or end) a dropped link's hold.
				const planner = this.#attached.get(id);
				const pending = planner && this.#unconfirmed.get(planner.link.id);
				return planner && (!pending || pending.kind === "fresh") ? planner : undefined;
			},
			publish: (id) => this.#publish(id),
			track: (work) => this.#track(work),
		});
		const { sessions, domain } = deps;
		this.#unsubscribe.push(
			sessions.onSignOut((_login, sessionId) => this.#endings.signInEnded(sessionId)),
			sessions.onSessionExpired((_login, sessionId) => this.#endings.signInEnded(sessionId)),
			domain.decisions.onSettled((settlement) => {
				const { documentId, id } = settlement.decision;
				// A disconnected Planner holds the answer for its client's return.
				const planner = this.#attached.get(documentId) ?? this.#held.get(documentId);
				if (planner?.questions.settled(settlement)) return;
				// Nobody waits on its request (asked before a crash, or by a link a restart ended): a turn of its own.
				const waited = this.#handover.holdsDecision(documentId, id);
				if (settlement.requestId && settlement.result.status === "answered" && !waited) {
					this.#orphans.add(documentId, id);
				}
			}),
			domain.hub.subscribeAll((documentId, event) => {
				if (event.type !== "document.updated") return;
				if (event.change === "archived" || event.change === "deleted")
					this.#endings.documentGone(documentId, event.change);
			}),
		);
	}

	handleMessage(input: ChatMessageInput): Promise<PlannerMessageResult> {
		return handleChatMessage(this.#reserve, input);
	}

	retry(input: RetryInput): Promise<RetryResult> {
		return retryReply(this.#reserve, input);
	}

	modelState(documentId: string): Promise<ChatModelState> {
		return this.#composer.state(documentId);
	}

	chooseModel(
		documentId: string,
		by: string,
		choice: { model: string | null; thinkingLevel: string | null },
	): Promise<ChooseResult> {
		return this.#composer.choose(documentId, by, choice);
	}

	async invoke(input: InvokeInput): Promise<InvokeResult> {
		const reserved = await reservePlanner(this.#reserve, input.documentId, input.by, (planner) =>
			// An automatic follow-up comes only from the account that holds the Planner.
			input.system && planner.login.toLowerCase() !== input.by.toLowerCase()
				? { status: "refused", code: "planner-forbidden", message: wording.systemForbidden(planner.login) }
				: undefined,
		);
		if (!reserved.ok) return reserved.refusal;
		return invokeTurn(reserved.planner, input);
	}

	status(documentId: string): PlannerStatus {
		const holder = this.#ownership.holder(documentId);
		if (!holder) return { state: "unattached" };
		if (holder.state === "grace") return { state: "grace", login: holder.login, until: holder.until };
		// Inside a restart's hand-over window the members see the Planner attached (spec: After a server restart).
		if (holder.state === "disconnected") {
			if (this.#handover.inWindow(documentId))
				return { state: "attached", login: holder.login, restarting: true };
			return { state: "disconnected", login: holder.login };
		}
		const busy = this.#attached.get(documentId)?.busy ?? false;
		return { state: busy ? "working" : "attached", login: holder.login };
	}

	reset(documentId: string): boolean {
		const holder = this.#ownership.holder(documentId);
		if (!holder) return false;
		this.#endings.end(documentId, "access-revoked", wording.reset(holder.login));
		return true;
	}

	using(documentId: string): boolean {
		if (this.#held.has(documentId)) return true;
		const planner = this.#attached.get(documentId);
		if (!planner) return false;
		return (
			planner.busy || planner.questions.openCount > 0 || planner.sessions.live().some((s) => s.holdsRuns)
		);
	}

	control(documentId: string, action: ControlAction, by: string): { sent: number } | null {
		return pressControl(this.#parts, documentId, action, by);
	}

	async runJob(documentId: string, input: JobInput): Promise<JobResult> {
		const planner = this.#attached.get(documentId);
		if (!planner) return { status: "failed", message: "No Planner is attached to this document." };
		return runJob(planner, input);
	}

	setStarter(starter: PlannerStarter): () => void {
		this.#starter = starter;
		return () => {
			if (this.#starter === starter) this.#starter = undefined;
		};
	}

	closeLinks(
		filter: LinkFilter,
		refusal: { code: "access-revoked" | "sign-in-required"; message: string | ((login: string) => string) },
	): number {
		return this.#endings.closeLinks(filter, refusal);
	}

	async settled(): Promise<void> {
		for (;;) {
			const pending = [...this.#teardowns, ...[...this.#attached.values()].map((p) => p.settled())];
			if (pending.length === 0) return;
			await Promise.allSettled(pending);
			if (this.#teardowns.size === 0) return;
		}
	}

	connections(): number {
		return this.#links.size;
	}

	linkStats(): LinkStats[] {
		return [...this.#links.values()].map((link) => ({
			id: link.id,
			login: link.principal.login,
			...(this.#byLink.get(link.id) && { documentId: this.#byLink.get(link.id)!.document.id }),
			state: link.state,
			framesReceived: link.framesReceived,
			bufferedAmount: link.ws.getBufferedAmount(),
		}));
	}

	socketHandlers(): SocketHandlers<AgentSocketData> {
		const { clock, log, config } = this.deps;
		const events: LinkEvents = {
			attach: (link, message) => this.#attach(link, message),
			message: (link, message) => this.#message(link, message),
			closed: (link, cause) => this.#closed(link, cause),
		};
		const linkOf = (ws: { data: AgentSocketData }) =>
			ws.data.linkId ? this.#links.get(ws.data.linkId) : undefined;
		return {
			open: (ws) => {
				const link = new AgentLink(ws, events, log, clock, config.agentConnection);
				ws.data.linkId = link.id;
				this.#links.set(link.id, link);
			},
			message: (ws, data) => linkOf(ws)?.receive(data),
			close: (ws, code, reason) => linkOf(ws)?.socketClosed(code, reason),
			drain: (ws) => linkOf(ws)?.drained(),
			ping: (ws) => linkOf(ws)?.heard(),
			pong: (ws) => linkOf(ws)?.heard(),
		};
	}

	async stop(): Promise<void> {
		// Every link is told before any socket closes (spec: After a server restart).
		const reconnectWithinMs = this.deps.config.handoverPlannerWindowMs;
		for (const link of this.#links.values()) {
			if (link.features.has("restart-notice")) link.send({ type: "restarting", reconnectWithinMs });
		}
		const liveAtCut = new Set(this.#attached.values());
		for (const link of [...this.#links.values()]) {
			link.close({ code: 1012, reason: "server restarting", kind: "restarting" });
		}
		await this.#handover.stop(this.#held.values(), liveAtCut, (held) => this.#teardown(held));
		this.#held.clear();
		while (this.#teardowns.size) await Promise.allSettled([...this.#teardowns]);
		this.#waiters.wakeAll();
		this.#ownership.clear();
		for (const off of this.#unsubscribe.splice(0)) off();
	}

	async #attach(link: AgentLink, message: Attach): Promise<void> {
		const { config } = this.deps;
		const documentId = documentIdOf(message.document, config.publicUrl);
		const before = documentId ? (this.#endings.counts.get(documentId)?.n ?? 0) : 0;
		const check = await checkAttach(this.deps, link.principal, message, documentId, (id) =>
			awaitsSignIn(this.#parts, id, link),
		);
		if (!link.open) return;
		if (!check.ok) return link.refuse(check.code, check.message);
		const { document } = check;
		// Something ended this document's attachment while the checks ran: refuse as it would have closed.
		const ended = this.#endings.counts.get(document.id);
		if (ended && ended.n !== before) return link.refuse(ended.code, ended.message);
		if (check.signInSessionId && !this.deps.sessions.live(check.signInSessionId)) {
			return link.refuse("sign-in-required", wording.signInEnded(link.principal.login, config.publicUrl));
		}
		const { principal } = link;
		const attached = {
			id: document.id,
			title: document.title,
			repository: document.repository,
			url: documentUrl(config.publicUrl, document.id),
		};
		const resumable = this.#grants(link, "resumable-sessions");
		const takeover = resumable ? ownLink(this.#parts, document.id, link) : undefined;
		if (takeover) {
			// Attached, unconfirmed: its first message says whether the holder's link is its own dead one.
			const ends = this.#endings.counts.get(document.id)?.n ?? 0;
			this.#unconfirmed.set(link.id, { kind: "takeover", old: takeover, document: attached, check, ends });
			link.attached(attached, SUPPORTED_FEATURES);
			return;
		}
		const acquired = this.#ownership.acquire(document.id, {
			login: principal.login,
			kind: principal.kind,
			linkId: link.id,
			...(check.signInSessionId && { signInSessionId: check.signInSessionId }),
			...(principal.machineId && { machineId: principal.machineId }),
		});
		if (!acquired.ok) return link.refuse("planner-attached", acquired.message);
		if (acquired.replaces) this.#replace(document.id, acquired.replaces, principal.login);
		this.#bind(link, attached, check);
		const rebuilt = await this.#handover.take(link, document.id, () => this.#planner(link, attached, check));
		if (rebuilt) this.#held.set(document.id, rebuilt);
		if (!link.open) return;
		const hold = this.#held.get(document.id);
		if (resumable) {
			const awaiting = check.awaitingSignIn && hold ? { awaitingSignIn: true as const } : {};
			this.#unconfirmed.set(link.id, hold ? { kind: "hold", hold, ...awaiting } : { kind: "fresh" });
		}
		// The same account attaching with a client that cannot resume ends what its dropped link kept.
		else if (hold) this.#endHoldUnclaimed(document.id, hold);
		link.attached(attached, SUPPORTED_FEATURES);
		this.deps.log.info("agent attached", { link: link.id, document: document.id, login: principal.login });
		if (principal.kind === "machine") this.#starter?.attached(document.id);
		this.#waiters.wake(document.id);
		this.#orphans.flush(document.id);
	}

	#grants(link: AgentLink, feature: Feature): boolean {
		return SUPPORTED_FEATURES.has(feature) && (link.requested?.includes(feature) ?? false);
	}

	/** The document's Planner for this link, in the maps. */
	#bind(link: AgentLink, attached: AttachedDocument, check: AttachCheck & { ok: true }): AttachedPlanner {
		const planner = this.#planner(link, attached, check);
		this.#attached.set(attached.id, planner);
		this.#byLink.set(link.id, planner);
		return planner;
	}

	#planner(link: AgentLink, attached: AttachedDocument, check: AttachCheck & { ok: true }): AttachedPlanner {
		const planner = new AttachedPlanner(
			link,
			attached,
			{
				principal: link.principal,
				repository: attached.repository,
				...(check.signInSessionId && { signInSessionId: check.signInSessionId }),
			},
			this.deps,
			() => this.#publish(attached.id),
		);
		planner.composer = this.#composer;
		return planner;
	}

	/** What a dropped link kept ends for good: questions withdrawn, runs shown stopped. */
	#endHold(documentId: string): void {
		this.#handover.endRestored(documentId);
		const hold = this.#held.get(documentId);
		if (!hold) return;
		this.#held.delete(documentId);
		this.#teardown(hold);
		this.#handover.forget(documentId);
	}

	/** Its client came back without resuming it: ended, and the answers given meanwhile go to the Planner. */
	#endHoldUnclaimed(documentId: string, hold: AttachedPlanner): void {
		const answered = hold.questions.unackedAnswers();
		this.#endHold(documentId);
		for (const decisionId of answered) this.#orphans.add(documentId, decisionId);
	}

	#teardown(planner: AttachedPlanner, options: { withdraw?: boolean } = {}): void {
		this.#track(planner.teardown(options));
	}

	/** Background work settled() and stop() wait for. */
	#track(work: Promise<void>): void {
		this.#teardowns.add(work);
		void work.finally(() => this.#teardowns.delete(work));
	}

	/** The same machine attached again: its earlier link (stale, or a second backend) is closed, its Planner let go. */
	#replace(documentId: string, linkId: string, login: string): void {
		const old = this.#byLink.get(linkId);
		if (this.#attached.get(documentId) === old) this.#attached.delete(documentId);
		// Its work is kept as a drop's: the new link resumes it with its first message, or ends it with anything else.
		this.#links.get(linkId)?.refuse("planner-attached", wording.replacedBySameMachine(login), "dropped");
		this.deps.log.info("agent link replaced by the same machine", { link: linkId, document: documentId });
	}

	#message(link: AgentLink, message: Exclude<ClientMessage, Attach>): void {
		const pending = this.#unconfirmed.get(link.id);
		if (routeAwaitingSignIn(this.#parts, link, pending, message)) return;
		if (pending) {
			this.#unconfirmed.delete(link.id);
			confirm(this.#parts, link, pending, message);
			return;
		}
		this.#byLink.get(link.id)?.dispatch(message);
	}

	#closed(link: AgentLink, cause: CloseCause): void {
		this.#links.delete(link.id);
		this.#unconfirmed.delete(link.id);
		const planner = this.#byLink.get(link.id);
		if (!planner) return;
		this.#byLink.delete(link.id);
		const documentId = planner.document.id;
		if (this.#attached.get(documentId) === planner) this.#attached.delete(documentId);
		// The catalog was this client's alone: composers stop offering it (a resumed client reports it again).
		if (planner.catalog) {
			planner.catalog = undefined;
			void this.#composer.publish(documentId);
		}
		// A drop it did not choose keeps a resumable link's work (a restart's too; stop() decides what survives).
		const unchosen = cause.kind === "dropped" || cause.kind === "restarting";
		if (unchosen && planner.resumable && planner.suspend()) {
			this.#held.set(documentId, planner);
			this.#ownership.disconnect(documentId, link.id);
			this.deps.log.info("agent link dropped, work kept", { link: link.id, document: documentId });
			// Stored at once, so a crash keeps the hold of a link that had already dropped (a stop writes its own).
			if (cause.kind === "dropped") this.#handover.persist(planner, false);
			return;
		}
		const release = cause.kind === "refused" || cause.kind === "restarting";
		this.#ownership.leave(documentId, link.id, release ? "release" : "grace");
		this.#teardown(planner, { withdraw: !(cause.kind === "restarting" && this.#handover.enabled) });
	}

	async restoreHolds(): Promise<void> {
		await this.#orphans.load();
		await this.#handover.restoreAll();
	}

	#publish(documentId: string): void {
		this.#orphans.flush(documentId);
		const status = this.status(documentId);
		const key = JSON.stringify(status);
		if (this.#published.get(documentId) === key) return;
		this.#published.set(documentId, key);
		this.deps.domain.hub.publish(documentId, { type: "planner.status", documentId, ...status });
	}
}
