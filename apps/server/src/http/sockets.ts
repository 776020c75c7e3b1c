// The WebSocket registry: routes upgrade with data.kind, and Bun's socket events go to the handlers registered for that kind.
import type { ServerWebSocket, WebSocketHandler } from "bun";
import type { Logger } from "../log";

/** What every upgraded socket carries; `kind` picks the handlers, the rest belongs to them. */
export interface SocketData {
	kind: string;
	[key: string]: unknown;
}

export type Socket<D extends SocketData = SocketData> = ServerWebSocket<D>;

export interface SocketHandlers<D extends SocketData> {
	open?(ws: Socket<D>): void | Promise<void>;
	message?(ws: Socket<D>, message: string | Buffer): void | Promise<void>;
	close?(ws: Socket<D>, code: number, reason: string): void | Promise<void>;
	drain?(ws: Socket<D>): void;
	ping?(ws: Socket<D>, data: Buffer): void;
	pong?(ws: Socket<D>, data: Buffer): void;
}

/** Bun's server-wide socket settings (they cannot differ per kind). */
export type SocketSettings = Omit<
	WebSocketHandler<SocketData>,
	"open" | "message" | "close" | "drain" | "ping" | "pong"
>;

export class SocketRegistry {
	readonly #kinds = new Map<string, SocketHandlers<SocketData>>();
	readonly #open = new Set<Socket>();
	readonly #log: Logger;
	/**
	 * Applied when the server starts. Defaults: 2 MiB frames (the agent protocol's limit) and
	 * no compression. Bun's own idle timeout and pings stay on unless a domain turns them off
	 * and runs its own timers, as the agent connection's spec requires.
	 */
	readonly settings: SocketSettings = { maxPayloadLength: 2 * 1024 * 1024, perMessageDeflate: false };

	constructor(log: Logger) {
		this.#log = log;
	}

	/** Registers the handlers for sockets upgraded with `{ data: { kind } }`. One registration per kind. */
	register<D extends SocketData>(kind: D["kind"], handlers: SocketHandlers<D>): void {
		if (this.#kinds.has(kind)) throw new Error(`socket kind ${kind} is already registered`);
		this.#kinds.set(kind, handlers as unknown as SocketHandlers<SocketData>);
	}

	/** True when a route may upgrade with this kind. */
	has(kind: string): boolean {
		return this.#kinds.has(kind);
	}

	/** Sockets open now. */
	get open(): ReadonlySet<Socket> {
		return this.#open;
	}

	/** Closes every open socket, e.g. with 1012 when the server stops. */
	closeAll(code: number, reason: string): void {
		for (const ws of this.#open) ws.close(code, reason);
	}

	/** The `websocket` option for Bun.serve. */
	handler(): WebSocketHandler<SocketData> {
		const run = (ws: Socket, event: string, fn: () => void | Promise<void>) => {
			const fail = (error: unknown) => {
				this.#log.error("socket handler failed", { kind: ws.data.kind, event, error });
				ws.close(1011, "internal error");
			};
			try {
				const result = fn();
				if (result instanceof Promise) result.catch(fail);
			} catch (error) {
				fail(error);
			}
		};
		const kinds = this.#kinds;
		const handlersOf = (ws: Socket) => kinds.get(ws.data.kind);
		return {
			...this.settings,
			open: (ws) => {
				const handlers = handlersOf(ws);
				if (!handlers) {
					this.#log.error("socket of an unregistered kind", { kind: ws.data.kind });
					ws.close(1011, "internal error");
					return;
				}
				this.#open.add(ws);
				if (handlers.open) run(ws, "open", () => handlers.open!(ws));
			},
			message: (ws, message) => {
				const handlers = handlersOf(ws);
				if (handlers?.message) run(ws, "message", () => handlers.message!(ws, message));
			},
			close: (ws, code, reason) => {
				this.#open.delete(ws);
				const handlers = handlersOf(ws);
				if (handlers?.close) run(ws, "close", () => handlers.close!(ws, code, reason));
			},
			drain: (ws) => {
				const handlers = handlersOf(ws);
				if (handlers?.drain) run(ws, "drain", () => handlers.drain!(ws));
			},
			ping: (ws, data) => {
				const handlers = handlersOf(ws);
				if (handlers?.ping) run(ws, "ping", () => handlers.ping!(ws, data));
			},
			pong: (ws, data) => {
				const handlers = handlersOf(ws);
				if (handlers?.pong) run(ws, "pong", () => handlers.pong!(ws, data));
			},
		};
	}
}
