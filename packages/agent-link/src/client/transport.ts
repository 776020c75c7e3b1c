/**
 * One socket API over the two WebSocket shapes a client meets: the platform's (Bun, Node 22+,
 * `new WebSocket(url, { protocols, headers })`, events via addEventListener) and the ws
 * package's (`new WebSocket(url, protocols, { headers })`, an EventEmitter), which Node 20 needs.
 * It also recovers the HTTP status of a refused upgrade, which each shape reports differently.
 */
import type { FrameData } from "../parse";

/**
 * A WebSocket class: Bun's global, or the ws package's default export. Typed loosely because the
 * two constructors take different arguments; openTransport tells them apart.
 */
export type WebSocketConstructor = new (url: string, ...rest: never[]) => object;

export interface TransportEvents {
	open(protocol: string): void;
	message(data: FrameData, isBinary: boolean): void;
	/** The socket closed after it had opened. */
	close(code: number, reason: string): void;
	/** The socket never opened: refused at the upgrade (status, and the body's code) or unreachable. */
	failed(failure: { status?: number; code?: string; message: string }): void;
}

export interface Transport {
	send(text: string): void;
	close(code: number, reason: string): void;
}

interface EmitterSocket {
	on(event: string, listener: (...args: never[]) => void): void;
	send(data: string): void;
	close(code?: number, reason?: string): void;
	terminate(): void;
	readonly protocol: string;
	binaryType: string;
}

interface TargetSocket {
	addEventListener(event: string, listener: (event: never) => void): void;
	send(data: string): void;
	close(code?: number, reason?: string): void;
	readonly protocol: string;
	binaryType: string;
}

/** Body bytes read from a refused upgrade, enough for a JSON `{ code }`. */
const BODY_LIMIT = 64 * 1024;

/** Bun's only report of a refused upgrade: "... failed: Expected 101 status code: 401". */
const BUN_STATUS = /Expected 101 status code: (\d{3})/;

function isEmitterClass(Ctor: WebSocketConstructor): boolean {
	return typeof (Ctor as unknown as { prototype?: { on?: unknown } }).prototype?.on === "function";
}

export function openTransport(
	Ctor: WebSocketConstructor,
	url: string,
	protocols: string[],
	headers: Record<string, string>,
	events: TransportEvents,
): Transport {
	return isEmitterClass(Ctor)
		? openEmitter(Ctor, url, protocols, headers, events)
		: openTarget(Ctor, url, protocols, headers, events);
}

function openTarget(
	Ctor: WebSocketConstructor,
	url: string,
	protocols: string[],
	headers: Record<string, string>,
	events: TransportEvents,
): Transport {
	const Socket = Ctor as unknown as new (
		url: string,
		options: { protocols: string[]; headers: Record<string, string> },
	) => TargetSocket;
	const socket = new Socket(url, { protocols, headers });
	socket.binaryType = "arraybuffer";
	let opened = false;
	let failure = "The connection could not be opened.";
	socket.addEventListener("open", () => {
		opened = true;
		events.open(socket.protocol);
	});
	socket.addEventListener("message", (event: { data: unknown }) => {
		const data = event.data;
		if (typeof data === "string") events.message(data, false);
		else if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) events.message(data, true);
		else events.message(new Uint8Array(), true);
	});
	socket.addEventListener("error", (event: { message?: unknown }) => {
		if (typeof event.message === "string" && event.message) failure = event.message;
	});
	socket.addEventListener("close", (event: { code: number; reason: string }) => {
		if (opened) return events.close(event.code, event.reason);
		const status = BUN_STATUS.exec(failure)?.[1];
		events.failed({ status: status ? Number(status) : undefined, message: withoutUrl(failure) });
	});
	return {
		send: (text) => socket.send(text),
		close: (code, reason) => socket.close(code, reason),
	};
}

function openEmitter(
	Ctor: WebSocketConstructor,
	url: string,
	protocols: string[],
	headers: Record<string, string>,
	events: TransportEvents,
): Transport {
	const Socket = Ctor as unknown as new (
		url: string,
		protocols: string[],
		options: { headers: Record<string, string> },
	) => EmitterSocket;
	const socket = new Socket(url, protocols, { headers });
	socket.binaryType = "nodebuffer";
	let opened = false;
	let failure: { status?: number; code?: string; message: string } = {
		message: "The connection could not be opened.",
	};
	socket.on("open", () => {
		opened = true;
		events.open(socket.protocol);
	});
	socket.on("message", (data: Uint8Array | Uint8Array[], isBinary: boolean) => {
		events.message(Array.isArray(data) ? concat(data) : data, isBinary);
	});
	// With a listener here ws leaves the refused request to us: read the body, then end it.
	socket.on("unexpected-response", (_request: unknown, response: ResponseLike) => {
		failure = { status: response.statusCode, message: `Unexpected server response: ${response.statusCode}` };
		readBody(response).then((body) => {
			failure.code = bodyCode(body);
			socket.terminate();
		});
	});
	socket.on("error", (error: { message?: string }) => {
		if (failure.status === undefined && error?.message) failure = { message: withoutUrl(error.message) };
	});
	socket.on("close", (code: number, reason: Uint8Array) => {
		if (opened) return events.close(code, new TextDecoder().decode(reason));
		events.failed(failure);
	});
	return {
		send: (text) => socket.send(text),
		close: (code, reason) => (opened ? socket.close(code, reason) : socket.terminate()),
	};
}

interface ResponseLike {
	statusCode: number;
	on(event: "data", listener: (chunk: Uint8Array | string) => void): void;
	on(event: "end" | "error" | "close", listener: () => void): void;
}

function readBody(response: ResponseLike): Promise<string> {
	return new Promise((resolve) => {
		const chunks: Uint8Array[] = [];
		let size = 0;
		let done = false;
		const finish = () => {
			if (done) return;
			done = true;
			resolve(new TextDecoder().decode(concat(chunks)));
		};
		response.on("data", (chunk) => {
			const bytes = typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk;
			if (size < BODY_LIMIT) chunks.push(bytes.subarray(0, BODY_LIMIT - size));
			size += bytes.length;
			if (size >= BODY_LIMIT) finish();
		});
		response.on("end", finish);
		response.on("error", finish);
		response.on("close", finish);
	});
}

/** The code of a JSON error body (`{ "code": "subprotocol-required", ... }`), when there is one. */
export function bodyCode(body: string): string | undefined {
	try {
		const value: unknown = JSON.parse(body);
		const code = typeof value === "object" && value !== null ? (value as { code?: unknown }).code : undefined;
		return typeof code === "string" && code.length <= 128 ? code : undefined;
	} catch {
		return undefined;
	}
}

function concat(parts: Uint8Array[]): Uint8Array {
	const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
	let at = 0;
	for (const part of parts) {
		out.set(part, at);
		at += part.length;
	}
	return out;
}

/** Socket errors quote the URL; keep them to what failed (the URL never holds the token, but stays out of logs). */
function withoutUrl(message: string): string {
	return message.replace(/'?wss?:\/\/[^\s']*'?/g, "the agent endpoint");
}
