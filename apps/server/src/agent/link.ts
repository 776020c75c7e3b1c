// One agent connection's frames and liveness: every frame through parseClientFrame with the granted features,
// violations answered with error then 1008/1009, the handshake's order, remembered request ids, pings, and how
// the link closes (the cause decides whether the account keeps the document for the grace period).
import {
	type Attach,
	CLOSE_CODES,
	type ClientMessage,
	cutNote,
	ERRORS,
	type ErrorCode,
	encodeServerMessage,
	type Feature,
	parseClientFrame,
	REFUSALS,
	type RefusalCode,
	type ServerMessage,
	toWireError,
	UNRESPONSIVE_REASON,
} from "@chopin/agent-link";
import type { Clock } from "@chopin/agent-link/clock";
import type { Socket } from "../http/sockets";
import type { Logger } from "../log";
import { Liveness, type LivenessSettings } from "./liveness";
import type { AgentPrincipal } from "./principal";
import { RememberedIds } from "./request-ids";
import type { AgentSocketData } from "./upgrade";

export type LinkState = "awaiting-attach" | "attaching" | "attached" | "closed";

/**
 * How a link ended, which decides what its end does: a detach or a protocol error ends what it held and its
 * account keeps the document for the grace period; a refusal ends the ownership now; a drop (the socket
 * closed under it, or it went unresponsive) and a server restart keep a resumable link's work (spec:
 * Resuming after a dropped link).
 */
export type CloseKind = "detach" | "error" | "refused" | "dropped" | "restarting";

/** Why a link closed. */
export interface CloseCause {
	code: number;
	reason: string;
	kind: CloseKind;
}

export interface LinkEvents {
	/** The first message, attach: answer with attached or refused. */
	attach(link: AgentLink, message: Attach): Promise<void>;
	/** Any message after attached (never attach). */
	message(link: AgentLink, message: Exclude<ClientMessage, Attach>): void;
	/** Once, however the link ended. */
	closed(link: AgentLink, cause: CloseCause): void;
}

export class AgentLink {
	readonly id: string;
	readonly principal: AgentPrincipal;
	/** What Chopin-Agent-Features asked for; null when the header was absent. */
	readonly requested: Feature[] | null;
	/** The features attached granted: the ones asked for that this server implements. */
	features: ReadonlySet<Feature> = new Set();
	readonly requestIds = new RememberedIds();
	/** Frames read so far (metrics; tests wait on it). */
	framesReceived = 0;
	#state: LinkState = "awaiting-attach";
	#cause: CloseCause | undefined;
	readonly #liveness: Liveness;

	constructor(
		readonly ws: Socket<AgentSocketData>,
		private readonly events: LinkEvents,
		private readonly log: Logger,
		clock: Clock,
		settings: LivenessSettings,
	) {
		this.id = crypto.randomUUID();
		this.principal = ws.data.principal;
		this.requested = ws.data.requested;
		this.#liveness = new Liveness(clock, settings, ws, () =>
			// Dropped as unresponsive: no error or refused message first (spec: Pings).
			this.close({ code: CLOSE_CODES.unresponsive, reason: UNRESPONSIVE_REASON, kind: "dropped" }),
		);
	}

	get state(): LinkState {
		return this.#state;
	}

	get open(): boolean {
		return this.#state !== "closed";
	}

	/**
	 * Answers attach with attached: the features it asked for that `supported` has, listed only when it sent
	 * Chopin-Agent-Features (spec: Features).
	 */
	attached(
		document: { id: string; title: string; repository: string; url: string },
		supported: ReadonlySet<Feature>,
	): void {
		const features = this.requested?.filter((f) => supported.has(f));
		this.features = new Set(features ?? []);
		this.#state = "attached";
		this.send({ type: "attached", version: 1, document, ...(features && { features }) });
	}

	/** A frame arrived (Bun's message handler). */
	receive(data: string | Buffer): void {
		this.framesReceived++;
		this.#liveness.heard();
		if (this.#state === "closed") return;
		const parsed = parseClientFrame(data, { features: this.features });
		if (!parsed.ok) {
			const wire = toWireError(parsed.error);
			this.fail(wire.code, parsed.error.message);
			return;
		}
		const message = parsed.message;
		if (this.#state === "awaiting-attach") {
			if (message.type !== "attach") {
				this.fail("protocol", `The first message must be attach, not ${message.type}.`);
				return;
			}
			this.#state = "attaching";
			this.events.attach(this, message).catch((error: unknown) => {
				this.log.error("agent attach failed", { error });
				this.refuse("unavailable", "Chopin could not attach the document just now. Try again later.");
			});
			return;
		}
		if (this.#state === "attaching") {
			this.fail("protocol", `Send nothing until attached or refused answers attach (got ${message.type}).`);
			return;
		}
		if (message.type === "attach") {
			this.fail("protocol", "The link is attached already: attach is sent once.");
			return;
		}
		this.events.message(this, message);
	}

	/** Any other frame from the client (a ping or a pong) shows it is alive. */
	heard(): void {
		this.#liveness.heard();
	}

	drained(): void {
		this.#liveness.drained();
	}

	/**
	 * Sends one message, checked by the client's own parse. Throws EncodeError for a message the
	 * client would refuse (a result too large for a frame, say); false when the link is closed.
	 */
	send(message: ServerMessage): boolean {
		if (this.#state === "closed") return false;
		const text = encodeServerMessage(message, { features: this.features });
		const sent = this.ws.send(text);
		// 0: Bun dropped it, its queue (about 16 MiB) is full: a client that stopped reading.
		if (sent === 0) {
			this.close({ code: CLOSE_CODES.unresponsive, reason: UNRESPONSIVE_REASON, kind: "dropped" });
			return false;
		}
		return true;
	}

	/** refused, then its close code (spec: Ownership and Closing). A refusal after attached ends the ownership. */
	refuse(code: RefusalCode, message: string, kind: "refused" | "dropped" = "refused"): void {
		if (this.#state === "closed") return;
		const retry = REFUSALS[code].retry;
		this.#trySend({ type: "refused", code, message: cutNote(message), ...(retry && { retry: true }) });
		// "dropped": refused to its client, but its work is kept as a drop's (a machine's stale link replaced).
		this.close({ code: REFUSALS[code].close, reason: code, kind });
	}

	/** error, then 1008 or 1009: a protocol violation (spec: Closing). */
	fail(code: ErrorCode, message: string): void {
		if (this.#state === "closed") return;
		this.log.info("agent protocol violation", { link: this.id, code, message });
		this.#trySend({ type: "error", code, message: cutNote(message) });
		this.close({ code: ERRORS[code].close, reason: code, kind: "error" });
	}

	/** Closes the socket and tears the link down once; later calls change nothing. */
	close(cause: CloseCause): void {
		if (this.#state === "closed") return;
		this.#finish(cause);
		try {
			this.ws.close(cause.code, cause.reason);
		} catch {
			// Already closed underneath.
		}
	}

	/** Bun's close handler: the socket is gone (the client closed it, the network dropped, or we did). */
	socketClosed(code: number, reason: string): void {
		if (this.#state === "closed") return;
		this.#finish({ code, reason, kind: "dropped" });
	}

	/** How it closed, once it has. */
	get cause(): CloseCause | undefined {
		return this.#cause;
	}

	#finish(cause: CloseCause): void {
		this.#state = "closed";
		this.#cause = cause;
		this.#liveness.stop();
		this.log.info("agent link closed", { link: this.id, login: this.principal.login, ...cause });
		this.events.closed(this, cause);
	}

	#trySend(message: ServerMessage): void {
		try {
			this.ws.send(encodeServerMessage(message, { features: this.features }));
		} catch (error) {
			this.log.error("agent message not sent", { error, type: message.type });
		}
	}
}
