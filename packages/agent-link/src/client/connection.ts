/**
 * One socket's life: the upgrade, attach and (when resuming) resume, then the live link, then
 * how it ended and what that ending keeps. Live messages are handled in dispatch.ts; sessions
 * and turns talk back through the Wire this implements.
 */
import { type Clock, systemClock, type Timer } from "../clock";
import { CLIENT_MALFORMED_CLOSE } from "../closing";
import { encodeClientMessage } from "../encode";
import { FEATURES_HEADER, type Feature, formatFeaturesHeader, grantedFeatures } from "../features";
import { type FrameData, parseServerFrame } from "../parse";
import { PROTOCOL_VERSION, SUBPROTOCOL } from "../protocol";
import type { ClientMessage } from "../schemas/client-messages";
import type { Attached } from "../schemas/handshake";
import type { ServerMessage } from "../schemas/server-messages";
import { type Deferred, deferred } from "./deferred";
import { dispatchLive, endSession } from "./dispatch";
import { LinkError, Refused, UpgradeRefused } from "./errors";
import { AgentLink } from "./link";
import { type CloseFacts, isDrop, type LinkClosed } from "./link-closed";
import { type ConnectOptions, checkOptions, endpointUrl, type Handlers, requestedFeatures } from "./options";
import { LinkResume } from "./resume";
import type { Session } from "./session";
import { openTransport, type Transport, type WebSocketConstructor } from "./transport";
import type { Wire } from "./wire";

type Phase = "connecting" | "attaching" | "resuming" | "ready" | "closed";

/**
 * Opens the agent connection and attaches to the document (and resumes, with resume). Resolves
 * once the link is ready; rejects with UpgradeRefused, Refused, or a LinkError.
 */
export function connectAgent(options: ConnectOptions): Promise<AgentLink> {
	let resuming: Map<string, Session> | undefined;
	try {
		checkOptions(options);
		const url = endpointUrl(options.url, options.allowInsecure);
		const Socket = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
		if (!Socket) {
			throw new LinkError(
				"invalid-options",
				"This runtime has no WebSocket class.",
				"Pass the ws package's WebSocket as the WebSocket option (Node.js 20).",
			);
		}
		resuming = options.resume?.take();
		return new Connection(options, url, Socket, resuming).ready;
	} catch (error) {
		// Nothing was attempted, so a resume taken for it stays usable.
		if (resuming) options.resume?.release();
		return Promise.reject(error);
	}
}

export class Connection implements Wire {
	readonly clock: Clock;
	readonly handlers: Handlers;
	readonly sessions = new Map<string, Session>();
	features: ReadonlySet<Feature> = new Set();
	attached?: Attached;
	readonly #options: ConnectOptions;
	readonly #requested: Feature[];
	readonly #transport: Transport;
	readonly #ready = deferred<AgentLink>();
	readonly #closed: Deferred<LinkClosed> = deferred();
	readonly #timers = new Set<Timer>();
	readonly #resuming?: Map<string, Session>;
	#phase: Phase = "connecting";
	#facts: CloseFacts = { detached: false };
	#reconnectWithinMs?: number;

	constructor(
		options: ConnectOptions,
		url: string,
		Socket: WebSocketConstructor,
		resuming?: Map<string, Session>,
	) {
		this.#options = options;
		this.handlers = options.handlers;
		this.clock = options.clock ?? systemClock({ unref: true });
		this.#requested = requestedFeatures(options);
		this.#resuming = resuming;
		const headers: Record<string, string> = { Authorization: `Bearer ${options.token}` };
		if (this.#requested.length > 0) headers[FEATURES_HEADER] = formatFeaturesHeader(this.#requested);
		this.#transport = openTransport(Socket, url, [SUBPROTOCOL], headers, {
			open: (protocol) => this.#onOpen(protocol),
			message: (data, isBinary) => this.#onMessage(data, isBinary),
			close: (code, reason) => this.#finish(code, reason),
			failed: (failure) => this.#onFailed(failure),
		});
		const signal = options.signal;
		if (signal?.aborted) this.#abort();
		else signal?.addEventListener("abort", this.#onAbort, { once: true });
	}

	readonly #onAbort = () => this.#abort();

	get ready(): Promise<AgentLink> {
		return this.#ready.promise;
	}

	get closed(): Promise<LinkClosed> {
		return this.#closed.promise;
	}

	encode(message: ClientMessage): string {
		return encodeClientMessage(message, { features: this.features });
	}

	sendText(text: string): void {
		if (this.#phase === "closed") {
			throw new LinkError("link-closed", "The link has closed.", "Wait for link.closed and connect again.");
		}
		this.#transport.send(text);
	}

	/** Sends a message the client owes (an answer, an acknowledgement); a closed link drops it. */
	sendQuietly(message: ClientMessage): void {
		if (this.#phase !== "ready") return;
		try {
			this.sendText(this.encode(message));
		} catch (error) {
			this.report(error);
		}
	}

	report(error: unknown): void {
		try {
			this.#options.onError?.(error);
		} catch {
			// A failing error sink must not take the link down with it.
		}
	}

	/** A timer on the client's clock that is cancelled when the link ends. */
	setTimer(fn: () => void, ms: number): Timer {
		const timer = this.clock.setTimeout(() => {
			this.#timers.delete(timer);
			if (this.#phase !== "closed") fn();
		}, ms);
		this.#timers.add(timer);
		return {
			cancel: () => {
				this.#timers.delete(timer);
				timer.cancel();
			},
		};
	}

	detach(): Promise<LinkClosed> {
		if (this.#phase === "ready") {
			this.#facts.detached = true;
			this.sendQuietly({ type: "detach" });
			this.#transport.close(1000, "detach");
			this.#finish(1000, "detach");
		}
		return this.closed;
	}

	/** A frame the client cannot parse, or one out of order: close 4400 and settle everything now. */
	malformed(detail: string): void {
		if (this.#phase === "closed") return;
		this.#facts.error = { code: "malformed-message", message: detail, by: "client" };
		this.#transport.close(CLIENT_MALFORMED_CLOSE.code, CLIENT_MALFORMED_CLOSE.reason);
		this.#finish(CLIENT_MALFORMED_CLOSE.code, CLIENT_MALFORMED_CLOSE.reason);
	}

	restarting(reconnectWithinMs: number): void {
		this.#reconnectWithinMs = reconnectWithinMs;
		try {
			this.handlers.restarting?.(reconnectWithinMs);
		} catch (error) {
			this.report(error);
		}
	}

	noteRefused(refused: NonNullable<CloseFacts["refused"]>): void {
		this.#facts.refused = refused;
	}

	noteError(error: NonNullable<CloseFacts["error"]>): void {
		this.#facts.error = error;
	}

	#onOpen(protocol: string): void {
		if (this.#phase !== "connecting") return;
		if (protocol !== SUBPROTOCOL) {
			this.#failHandshake(
				new LinkError(
					"subprotocol-missing",
					"The server did not answer with the chopin.agent.v1 subprotocol.",
					"Check that the url is a Chopin origin whose server speaks chopin.agent.v1.",
				),
			);
			this.#transport.close(1000, "subprotocol");
			return;
		}
		this.#phase = "attaching";
		const { document, checkout } = this.#options;
		this.sendText(this.encode({ type: "attach", version: PROTOCOL_VERSION, document, checkout }));
	}

	#onMessage(data: FrameData, isBinary: boolean): void {
		if (this.#phase === "closed" || this.#phase === "connecting") return;
		const parsed = parseServerFrame(data, { features: this.features, isBinary });
		if (!parsed.ok) this.malformed(parsed.error.message);
		else if (this.#phase === "ready") dispatchLive(this, parsed.message);
		else this.#onHandshake(parsed.message);
	}

	#onHandshake(message: ServerMessage): void {
		const phase = this.#phase;
		if (message.type === "attached" && phase === "attaching") this.#onAttached(message);
		else if (message.type === "resumed" && phase === "resuming") this.#onResumed(message.sessions);
		else if (message.type === "restarting" && phase === "resuming")
			this.restarting(message.reconnectWithinMs);
		else if (message.type === "refused") {
			this.#facts.refused = { code: message.code, message: message.message, retry: message.retry === true };
			this.#failHandshake(new Refused(message));
		} else if (message.type === "error") {
			this.#facts.error = { code: message.code, message: message.message, by: "server" };
			this.#failHandshake(
				new LinkError("server-error", message.message, `The server's error code was ${message.code}.`),
			);
		} else this.malformed(`The server sent ${message.type} before the link was ready.`);
	}

	#onAttached(message: Attached): void {
		this.attached = message;
		this.features = grantedFeatures(this.#requested, message.features);
		if (this.#resuming && !this.features.has("resumable-sessions")) {
			this.#endResume("The server did not grant resumable-sessions, so nothing was resumed.");
		}
		if (!this.#resuming || !this.features.has("resumable-sessions")) {
			this.#becomeReady();
			return;
		}
		this.#phase = "resuming";
		this.sendText(this.encode({ type: "resume", sessions: this.#options.resume!.sessions }));
	}

	#onResumed(listed: { session: string; requests: string[] }[]): void {
		const held = new Map(listed.map((entry) => [entry.session, new Set(entry.requests)]));
		this.#options.resume?.finish();
		for (const [id, session] of this.#resuming ?? []) {
			const requests = held.get(id);
			if (requests) {
				this.sessions.set(id, session);
				session.bind(this, requests);
			} else {
				endSession(this, session, "Chopin no longer holds this session.");
			}
		}
		this.#becomeReady();
	}

	#becomeReady(): void {
		this.#options.signal?.removeEventListener("abort", this.#onAbort);
		this.#phase = "ready";
		const link = new AgentLink(this);
		this.#reportCapabilities(link);
		this.#ready.resolve(link);
	}

	/** The capabilities option, first after attached (or after resumed, which stays the first message). */
	#reportCapabilities(link: AgentLink): void {
		const { capabilities } = this.#options;
		if (!capabilities || !this.features.has("capability-catalog")) return;
		try {
			link.reportCapabilities(typeof capabilities === "function" ? capabilities() : capabilities);
		} catch (error) {
			// A catalog the backend could not give (or encode) leaves the link without one: no choice is offered.
			this.#options.onError?.(error);
		}
	}

	/** The resume cannot continue: its sessions end and their questions settle cancelled. */
	#endResume(reason: string): void {
		this.#options.resume?.finish();
		for (const session of this.#resuming?.values() ?? []) endSession(this, session, reason);
	}

	#failHandshake(error: Error): void {
		if (this.#ready.settled) return;
		// Only a decision ends what a resume holds: a refusal without retry, an error, a malformed frame.
		const final =
			(error instanceof Refused && !error.retry) ||
			(error instanceof LinkError && (error.code === "server-error" || error.code === "malformed-message"));
		if (final) this.#endResume("The server refused to resume the link's sessions.");
		else this.#options.resume?.release();
		this.#ready.reject(error);
	}

	#onFailed(failure: { status?: number; code?: string; message: string }): void {
		if (this.#phase === "closed") return;
		this.#phase = "closed";
		this.#options.signal?.removeEventListener("abort", this.#onAbort);
		this.#options.resume?.release();
		this.#ready.reject(
			failure.status !== undefined
				? new UpgradeRefused(failure.status, failure.code)
				: new LinkError(
						"connect-failed",
						failure.message,
						"Check the url and the network, then retry on a backoff.",
					),
		);
		this.#closed.resolve({ code: 1006, reason: "" });
	}

	#abort(): void {
		if (this.#phase === "ready" || this.#phase === "closed") return;
		this.#failHandshake(new LinkError("aborted", "Connecting was aborted.", "Connect again when needed."));
		this.#transport.close(1000, "aborted");
		this.#finish(1000, "aborted");
	}

	/** The socket is gone (or the client gave up on it): settle the link and decide what it keeps. */
	#finish(code: number, reason: string): void {
		if (this.#phase === "closed") return;
		const wasReady = this.#phase === "ready";
		this.#phase = "closed";
		this.#options.signal?.removeEventListener("abort", this.#onAbort);
		for (const timer of this.#timers) timer.cancel();
		this.#timers.clear();
		const closed: LinkClosed = { code, reason };
		if (this.#facts.refused) closed.refused = this.#facts.refused;
		if (this.#facts.error) closed.error = this.#facts.error;
		if (this.#reconnectWithinMs !== undefined) closed.reconnectWithinMs = this.#reconnectWithinMs;

		if (!wasReady) {
			if (!this.#ready.settled) {
				const malformed = this.#facts.error?.by === "client";
				this.#failHandshake(
					malformed
						? new LinkError(
								"malformed-message",
								this.#facts.error!.message,
								"The server sent what chopin.agent.v1 does not allow.",
								closed,
							)
						: new LinkError(
								"closed-during-handshake",
								`The connection closed (${code}) before the link was ready.`,
								"Connect again on a backoff (at once after 1012).",
								closed,
							),
				);
			}
			this.#closed.resolve(closed);
			return;
		}

		const keep = isDrop(this.#facts) && this.features.has("resumable-sessions");
		const reason_ = keep ? "The link dropped." : "The link to Chopin closed.";
		const sessions = [...this.sessions.values()];
		this.sessions.clear();
		if (keep) {
			for (const session of sessions) session.unbind(reason_);
			closed.resume = new LinkResume(sessions);
		} else {
			for (const session of sessions) endSession(this, session, reason_);
		}
		this.#closed.resolve(closed);
	}
}
