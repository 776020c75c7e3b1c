// The agent endpoint's service (ctx.planner, see planner-service.ts): the links open now, each document's
// Planner and its ownership, attach, the events that end an attachment (sign-out, reset, archive, delete),
// @chopin messages, Stop/Resume, and the planner.status live events.
import type { Attach, ClientMessage, Feature } from "@chopin/agent-link";
import { mentionsPlanner } from "../chat/mentions";
import type { MessageView } from "../chat/message-view";
import type { SocketHandlers } from "../http/sockets";
import type { ChatModelState } from "../live/events";
import { checkAttach } from "./attach";
import { AttachedPlanner } from "./attached";
import { runChatTurn } from "./chat-turns";
import { type MessageCommand, runCommandMessage } from "./commands";
import { type ChooseResult, ComposerModels } from "./composer-model";
import type { ControlAction } from "./control";
import type { AgentDeps } from "./deps";
import { documentIdOf, documentUrl } from "./document-ref";
import { type InvokeInput, type InvokeResult, invokeTurn } from "./invoke";
import { type JobInput, type JobResult, runJob } from "./jobs";
import { AgentLink, type CloseCause, type LinkEvents } from "./link";
import { Ownership } from "./ownership";
import type {
	LinkFilter,
	LinkStats,
	PlannerMessageResult,
	PlannerService,
	PlannerStarter,
	PlannerStatus,
} from "./planner-service";
import { accountResolver, BearerResolvers } from "./principal";
import { AttachWaiters, type ReserveDeps, reservePlanner } from "./reserve";
import type { AgentSocketData } from "./upgrade";
import { wording } from "./wording";

/** The optional features this server implements; attached lists the requested ones among them. */
export const SUPPORTED_FEATURES: ReadonlySet<Feature> = new Set<Feature>(["capability-catalog"]);

type EndCode = "access-revoked" | "sign-in-required" | "document-archived" | "document-unavailable";

export class Planner implements PlannerService {
	readonly resolvers: BearerResolvers;
	readonly #ownership: Ownership;
	readonly #links = new Map<string, AgentLink>();
	readonly #attached = new Map<string, AttachedPlanner>();
	readonly #byLink = new Map<string, AttachedPlanner>();
	/** Per document: bumped by every explicit end, so an attach checked before it is refused after. */
	readonly #ends = new Map<string, { n: number; code: EndCode; message: string }>();
	readonly #teardowns = new Set<Promise<void>>();
	readonly #published = new Map<string, string>();
	readonly #unsubscribe: (() => void)[] = [];
	#starter: PlannerStarter | undefined;
	/** Per document: what waits for its Planner to attach (an @chopin message while a machine starts one). */
	readonly #waiters: AttachWaiters;
	readonly #reserve: ReserveDeps;
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
			publish: (id) => this.#publish(id),
		};
		this.#ownership = new Ownership(
			deps.clock,
			() => deps.config.plannerAttachGraceMs,
			(id) => this.#publish(id),
		);
		const { sessions, domain } = deps;
		this.#unsubscribe.push(
			sessions.onSignOut((_login, sessionId) => this.#signInEnded(sessionId)),
			sessions.onSessionExpired((_login, sessionId) => this.#signInEnded(sessionId)),
			domain.decisions.onSettled((settlement) => {
				this.#attached.get(settlement.decision.documentId)?.questions.settled(settlement);
			}),
			domain.hub.subscribeAll((documentId, event) => {
				if (event.type !== "document.updated") return;
				if (event.change === "archived" || event.change === "deleted")
					this.#documentGone(documentId, event.change);
			}),
		);
	}

	async handleMessage(input: {
		documentId: string;
		author: string;
		body: string;
		command?: MessageCommand;
	}): Promise<PlannerMessageResult> {
		const { chat } = this.deps.domain;
		if (input.command) return runCommandMessage(this.#reserve, { ...input, command: input.command });
		if (!mentionsPlanner(input.body)) {
			const posted = await chat.post(input.documentId, { author: input.author, body: input.body });
			return { status: "sent", message: posted.message, turn: false };
		}
		const reserved = await reservePlanner(this.#reserve, input.documentId, input.author);
		if (!reserved.ok) return reserved.refusal as PlannerMessageResult;
		const { planner } = reserved;
		let message: MessageView;
		try {
			message = (await chat.post(input.documentId, { author: input.author, body: input.body })).message;
		} catch (error) {
			planner.idle();
			throw error;
		}
		void runChatTurn(planner, {
			replyTo: message.id,
			before: message.seq,
			prompt: `@${input.author}: ${message.body}`,
		});
		return { status: "sent", message, turn: true };
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
		const busy = this.#attached.get(documentId)?.busy ?? false;
		return { state: busy ? "working" : "attached", login: holder.login };
	}

	reset(documentId: string): boolean {
		const holder = this.#ownership.holder(documentId);
		if (!holder) return false;
		this.#end(documentId, "access-revoked", wording.reset(holder.login));
		return true;
	}

	control(documentId: string, action: ControlAction, by: string): { sent: number } | null {
		const planner = this.#attached.get(documentId);
		if (!planner) return null;
		const running = planner.runningTurns();
		const sessions = planner.sessions.live().filter((s) => s.state === "started");
		if (action === "stop") {
			for (const turn of running) turn.abort();
			// A Planner that only waits on questions: Stop withdraws them (answered cancelled).
			if (running.length === 0 && planner.questions.openCount > 0 && sessions.every((s) => !s.holdsRuns)) {
				for (const session of sessions) void planner.questions.endSession(session);
			}
		}
		return { sent: planner.controls.press(action, by, sessions) };
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
		let n = 0;
		for (const documentId of this.#ownership.documents()) {
			const holder = this.#ownership.holder(documentId)!;
			if (filter.documentId && filter.documentId !== documentId) continue;
			if (filter.login && filter.login.toLowerCase() !== holder.login.toLowerCase()) continue;
			if (filter.machineId && filter.machineId !== holder.machineId) continue;
			const message = typeof refusal.message === "string" ? refusal.message : refusal.message(holder.login);
			this.#end(documentId, refusal.code, message);
			n++;
		}
		return n;
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
		for (const link of [...this.#links.values()]) {
			link.close({ code: 1012, reason: "server restarting", ownership: "release" });
		}
		while (this.#teardowns.size) await Promise.allSettled([...this.#teardowns]);
		this.#waiters.wakeAll();
		this.#ownership.clear();
		for (const off of this.#unsubscribe.splice(0)) off();
	}

	async #attach(link: AgentLink, message: Attach): Promise<void> {
		const { config } = this.deps;
		const documentId = documentIdOf(message.document, config.publicUrl);
		const before = documentId ? (this.#ends.get(documentId)?.n ?? 0) : 0;
		const check = await checkAttach(this.deps, link.principal, message, documentId);
		if (!link.open) return;
		if (!check.ok) return link.refuse(check.code, check.message);
		const { document } = check;
		// Something ended this document's attachment while the checks ran: refuse as it would have closed.
		const ended = this.#ends.get(document.id);
		if (ended && ended.n !== before) return link.refuse(ended.code, ended.message);
		if (check.signInSessionId && !this.deps.sessions.live(check.signInSessionId)) {
			return link.refuse("sign-in-required", wording.signInEnded(link.principal.login, config.publicUrl));
		}
		const { principal } = link;
		const acquired = this.#ownership.acquire(document.id, {
			login: principal.login,
			kind: principal.kind,
			linkId: link.id,
			...(check.signInSessionId && { signInSessionId: check.signInSessionId }),
			...(principal.machineId && { machineId: principal.machineId }),
		});
		if (!acquired.ok) return link.refuse("planner-attached", acquired.message);
		if (acquired.replaces) this.#replace(document.id, acquired.replaces, principal.login);
		const attached = {
			id: document.id,
			title: document.title,
			repository: document.repository,
			url: documentUrl(config.publicUrl, document.id),
		};
		const planner = new AttachedPlanner(
			link,
			attached,
			{
				principal,
				repository: document.repository,
				...(check.signInSessionId && { signInSessionId: check.signInSessionId }),
			},
			this.deps,
			() => this.#publish(document.id),
		);
		planner.composer = this.#composer;
		this.#attached.set(document.id, planner);
		this.#byLink.set(link.id, planner);
		const features = link.requested?.filter((f) => SUPPORTED_FEATURES.has(f));
		link.markAttached(new Set(features ?? []));
		link.send({ type: "attached", version: 1, document: attached, ...(features && { features }) });
		this.deps.log.info("agent attached", { link: link.id, document: document.id, login: principal.login });
		if (principal.kind === "machine") this.#starter?.attached(document.id);
		this.#waiters.wake(document.id);
	}

	/** The same machine attached again: its earlier link (stale, or a second backend) is closed, its Planner let go. */
	#replace(documentId: string, linkId: string, login: string): void {
		const old = this.#byLink.get(linkId);
		if (this.#attached.get(documentId) === old) this.#attached.delete(documentId);
		this.#links.get(linkId)?.refuse("planner-attached", wording.replacedBySameMachine(login));
		this.deps.log.info("agent link replaced by the same machine", { link: linkId, document: documentId });
	}

	#message(link: AgentLink, message: Exclude<ClientMessage, Attach>): void {
		this.#byLink.get(link.id)?.dispatch(message);
	}

	#closed(link: AgentLink, cause: CloseCause): void {
		this.#links.delete(link.id);
		const planner = this.#byLink.get(link.id);
		if (!planner) return;
		this.#byLink.delete(link.id);
		const documentId = planner.document.id;
		if (this.#attached.get(documentId) === planner) this.#attached.delete(documentId);
		this.#ownership.leave(documentId, link.id, cause.ownership);
		// The catalog was this client's alone: composers stop offering it.
		if (planner.catalog) void this.#composer.publish(documentId);
		const teardown = planner.teardown();
		this.#teardowns.add(teardown);
		void teardown.finally(() => this.#teardowns.delete(teardown));
	}

	/** An explicit end: the attached link is refused and closed, a grace period ends, and attaches in flight are refused. */
	#end(documentId: string, code: "access-revoked" | "sign-in-required", message: string): void {
		this.#bump(documentId, code, message);
		const planner = this.#attached.get(documentId);
		if (planner) {
			planner.link.refuse(code, message);
		}
		this.#ownership.release(documentId);
	}

	#bump(documentId: string, code: EndCode, message: string): void {
		const previous = this.#ends.get(documentId)?.n ?? 0;
		this.#ends.set(documentId, { n: previous + 1, code, message });
	}

	#signInEnded(sessionId: string): void {
		const { publicUrl } = this.deps.config;
		for (const documentId of this.#ownership.documents()) {
			const holder = this.#ownership.holder(documentId);
			if (holder?.signInSessionId !== sessionId) continue;
			this.#end(documentId, "sign-in-required", wording.signInEnded(holder.login, publicUrl));
		}
	}

	#documentGone(documentId: string, change: "archived" | "deleted"): void {
		const holder = this.#ownership.holder(documentId);
		// An attach checked before this is refused as the document now reads; an attached link loses it.
		const code = change === "archived" ? "document-archived" : "document-unavailable";
		const message = wording.documentGone(holder?.login ?? "the Planner", change);
		this.#bump(documentId, code, message);
		const planner = this.#attached.get(documentId);
		if (planner) planner.link.refuse("access-revoked", message);
		this.#ownership.release(documentId);
	}

	#publish(documentId: string): void {
		const status = this.status(documentId);
		const key = JSON.stringify(status);
		if (this.#published.get(documentId) === key) return;
		this.#published.set(documentId, key);
		this.deps.domain.hub.publish(documentId, { type: "planner.status", documentId, ...status });
	}
}
