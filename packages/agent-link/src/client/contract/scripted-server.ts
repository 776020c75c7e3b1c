/**
 * A scripted /api/v1/agent endpoint for the contract suite: it admits the upgrade the spec's way
 * (426, 403, 401 before anything opens), records each request's headers, and lets a test play
 * the server's side of each connection: expect a message, send one, close with a code. Every
 * frame the client sends is parsed as the real server parses it, with the features granted.
 */
import type { Server, ServerWebSocket } from "bun";
import { subprotocolRequiredBody } from "../../closing";
import { encodeServerMessage } from "../../encode";
import { FEATURES_HEADER, type Feature, parseFeaturesHeader } from "../../features";
import { MAX_FRAME_BYTES } from "../../limits";
import { parseClientFrame, toWireError } from "../../parse";
import { AGENT_PATH, offersSubprotocol, SUBPROTOCOL } from "../../protocol";
import type { ClientMessage, ClientMessageType } from "../../schemas/client-messages";
import type { Attach, Attached } from "../../schemas/handshake";
import type { ServerMessage } from "../../schemas/server-messages";

export interface UpgradeRecord {
	headers: Record<string, string>;
	status: number;
}

type Socket = ServerWebSocket<{ connection: ScriptedConnection }>;
type Frame = { message: ClientMessage; bytes: number } | { error: string };

export class ScriptedServer {
	readonly upgrades: UpgradeRecord[] = [];
	readonly #server: Server<{ connection: ScriptedConnection }>;
	readonly #token: string;
	readonly #refusals: { status: number; body: unknown }[] = [];
	readonly #arrived: ScriptedConnection[] = [];
	readonly #waiting: ((connection: ScriptedConnection) => void)[] = [];
	readonly #all = new Set<ScriptedConnection>();

	constructor(token: string) {
		this.#token = token;
		this.#server = Bun.serve<{ connection: ScriptedConnection }>({
			port: 0,
			hostname: "127.0.0.1",
			fetch: (request, server) => this.#admit(request, server),
			websocket: {
				maxPayloadLength: MAX_FRAME_BYTES,
				open: (ws) => {
					ws.data.connection.opened(ws);
					const waiter = this.#waiting.shift();
					if (waiter) waiter(ws.data.connection);
					else this.#arrived.push(ws.data.connection);
				},
				message: (ws, data) => ws.data.connection.received(data),
				close: (ws, code, reason) => ws.data.connection.ended(code, reason),
			},
		});
	}

	/** The Chopin origin a client is given. */
	get url(): string {
		return `http://127.0.0.1:${this.#server.port}`;
	}

	/** Answers the next upgrade request with this HTTP status and JSON body instead of admitting it. */
	refuseNext(status: number, body: unknown = { code: `http-${status}` }): void {
		this.#refusals.push({ status, body });
	}

	/** The next connection that opened (already open, or the next to open). */
	nextConnection(): Promise<ScriptedConnection> {
		const ready = this.#arrived.shift();
		if (ready) return Promise.resolve(ready);
		return new Promise((resolve) => this.#waiting.push(resolve));
	}

	stop(): void {
		for (const connection of this.#all) connection.terminate();
		this.#server.stop(true);
	}

	#admit(request: Request, server: Server<{ connection: ScriptedConnection }>): Response | undefined {
		const headers = Object.fromEntries(request.headers);
		const refuse = (status: number, body: unknown) => {
			this.upgrades.push({ headers, status });
			return Response.json(body, { status });
		};
		if (new URL(request.url).pathname !== AGENT_PATH) return refuse(404, { code: "not-found" });
		const scripted = this.#refusals.shift();
		if (scripted) return refuse(scripted.status, scripted.body);
		if (!offersSubprotocol(request.headers.get("sec-websocket-protocol")))
			return refuse(426, subprotocolRequiredBody());
		const origin = request.headers.get("origin");
		if (origin && origin !== this.url) return refuse(403, { code: "foreign-origin" });
		if (request.headers.get("authorization") !== `Bearer ${this.#token}`)
			return refuse(401, { code: "unauthorized" });
		const connection = new ScriptedConnection(
			headers,
			parseFeaturesHeader(request.headers.get(FEATURES_HEADER)),
		);
		this.#all.add(connection);
		this.upgrades.push({ headers, status: 101 });
		if (server.upgrade(request, { data: { connection }, headers: { "Sec-WebSocket-Protocol": SUBPROTOCOL } }))
			return;
		return refuse(400, { code: "upgrade-failed" });
	}
}

/** The server's side of one connection, driven by a test. */
export class ScriptedConnection {
	/** Features granted in attached; frames are parsed (and messages encoded) with them. */
	features: Feature[] = [];
	readonly frames: Frame[] = [];
	readonly #queue: Frame[] = [];
	#socket?: Socket;
	#waiter?: () => void;
	#closed?: { code: number; reason: string };
	readonly #closedWaiters: ((closed: { code: number; reason: string }) => void)[] = [];

	constructor(
		/** The upgrade request's headers, lower-cased. */
		readonly headers: Record<string, string>,
		/** The features named in Chopin-Agent-Features. */
		readonly requested: Feature[],
	) {}

	/** How the client's socket closed, as the server saw it. */
	get closed(): Promise<{ code: number; reason: string }> {
		if (this.#closed) return Promise.resolve(this.#closed);
		return new Promise((resolve) => this.#closedWaiters.push(resolve));
	}

	/** The next message; rejects when the client closes first or sends a frame the server refuses. */
	async next(): Promise<ClientMessage> {
		for (;;) {
			const frame = this.#queue.shift();
			if (frame) {
				if ("error" in frame) throw new Error(`The client sent a frame the server refuses: ${frame.error}`);
				return frame.message;
			}
			if (this.#closed) {
				throw new Error(
					`The client closed (${this.#closed.code} ${this.#closed.reason}) while the server waited.`,
				);
			}
			await new Promise<void>((resolve) => {
				this.#waiter = resolve;
			});
		}
	}

	/** The next message, which must be of this type. */
	async expect<T extends ClientMessageType>(type: T): Promise<Extract<ClientMessage, { type: T }>> {
		const message = await this.next();
		if (message.type !== type) {
			throw new Error(
				`Expected a ${type} message, got ${message.type}: ${JSON.stringify(message).slice(0, 300)}`,
			);
		}
		return message as Extract<ClientMessage, { type: T }>;
	}

	/** Expects attach and answers attached, granting grant (default: every feature the client asked for). */
	async attach(
		grant: Feature[] = this.requested,
		document: Partial<Attached["document"]> = {},
	): Promise<Attach> {
		const attach = await this.expect("attach");
		this.features = grant.filter((feature) => this.requested.includes(feature));
		this.send({
			type: "attached",
			version: 1,
			document: { id: "doc-1", title: "Plan", repository: "octo-org/score", ...document },
			...(this.requested.length > 0 ? { features: this.features } : {}),
		});
		return attach;
	}

	send(message: ServerMessage): void {
		this.sendRaw(encodeServerMessage(message, { features: this.features }));
	}

	sendRaw(data: string | Uint8Array): void {
		this.#socket?.send(data);
	}

	close(code: number, reason = ""): void {
		this.#socket?.close(code, reason);
	}

	/** Drops the socket without a close frame, as a network failure does. */
	terminate(): void {
		this.#socket?.terminate();
	}

	/** @internal */
	opened(socket: Socket): void {
		this.#socket = socket;
	}

	/** @internal */
	received(data: string | Buffer): void {
		const parsed = parseClientFrame(data, { features: this.features });
		const frame: Frame = parsed.ok
			? { message: parsed.message, bytes: typeof data === "string" ? Buffer.byteLength(data) : data.length }
			: { error: parsed.error.message };
		this.frames.push(frame);
		this.#queue.push(frame);
		if (!parsed.ok) {
			// As the real server answers a refused frame: error, then close 1008 or 1009.
			const wire = toWireError(parsed.error);
			this.sendRaw(encodeServerMessage({ type: "error", code: wire.code, message: parsed.error.message }));
			this.close(wire.close, wire.code);
		}
		this.#wake();
	}

	/** @internal */
	ended(code: number, reason: string): void {
		this.#closed = { code, reason };
		for (const waiter of this.#closedWaiters.splice(0)) waiter(this.#closed);
		this.#wake();
	}

	#wake(): void {
		const waiter = this.#waiter;
		this.#waiter = undefined;
		waiter?.();
	}
}
