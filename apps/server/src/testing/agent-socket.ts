// A raw agent-connection client for tests: the WebSocket handshake and frames written by hand over a TCP socket,
// so a test sees every status, header, frame and ping, can send what no client should (binary, oversized,
// out of order), stop answering pings, or stop reading altogether.
import { type Feature, parseServerFrame, type ServerMessage } from "@chopin/agent-link";
import type { Socket } from "bun";

export interface AgentSocketOptions {
	/** http://127.0.0.1:<port> */
	url: string;
	path?: string;
	/** The bearer; null sends no Authorization header. */
	token?: string | null;
	/** Sec-WebSocket-Protocol; null sends none. Default chopin.agent.v1. */
	protocols?: string | null;
	origin?: string;
	/** Chopin-Agent-Features; undefined sends none. */
	features?: string;
	headers?: Record<string, string>;
}

/** The upgrade's answer: 101 with the socket, or a refusal's status, headers and body. */
export interface UpgradeAnswer {
	status: number;
	headers: Headers;
	body: string;
	socket?: AgentSocket;
}

export interface Closed {
	code: number;
	reason: string;
}

const OPCODES = { continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const;

/** Opens the socket and sends the upgrade; resolves with the 101 and a socket, or the refusal's status and body. */
export async function openAgentSocket(options: AgentSocketOptions): Promise<UpgradeAnswer> {
	const url = new URL(options.url);
	const key = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
	const lines = [
		`GET ${options.path ?? "/api/v1/agent"} HTTP/1.1`,
		`Host: ${url.host}`,
		"Upgrade: websocket",
		"Connection: Upgrade",
		`Sec-WebSocket-Key: ${key}`,
		"Sec-WebSocket-Version: 13",
	];
	const protocols = options.protocols === undefined ? "chopin.agent.v1" : options.protocols;
	if (protocols !== null) lines.push(`Sec-WebSocket-Protocol: ${protocols}`);
	if (options.token !== undefined && options.token !== null)
		lines.push(`Authorization: Bearer ${options.token}`);
	if (options.origin !== undefined) lines.push(`Origin: ${options.origin}`);
	if (options.features !== undefined) lines.push(`Chopin-Agent-Features: ${options.features}`);
	for (const [name, value] of Object.entries(options.headers ?? {})) lines.push(`${name}: ${value}`);
	const socket = new AgentSocket();
	const answer = socket.handshake();
	await socket.connect(url.hostname, Number(url.port));
	socket.write(Buffer.from(`${lines.join("\r\n")}\r\n\r\n`));
	return answer;
}

/** Opens a socket that must be upgraded. */
export async function connectAgentSocket(options: AgentSocketOptions): Promise<AgentSocket> {
	const answer = await openAgentSocket(options);
	if (answer.status !== 101)
		throw new Error(`upgrade answered ${answer.status}: ${(answer as { body: string }).body}`);
	return (answer as { socket: AgentSocket }).socket;
}

export class AgentSocket {
	/** Every message received, in order. */
	readonly received: ServerMessage[] = [];
	/** Pings received; answered with a pong while autoPong is on. */
	pings = 0;
	/** Pongs received (the server answers a client's ping itself). */
	pongs = 0;
	autoPong = true;
	/** The features attached granted (for parsing what follows). */
	features: Feature[] = [];
	readonly closed: Promise<Closed>;
	#tcp: Socket | undefined;
	#buffer: Buffer = Buffer.alloc(0);
	#upgraded = false;
	#answer!: (answer: UpgradeAnswer) => void;
	#fail!: (error: Error) => void;
	#queue: ServerMessage[] = [];
	#waiters: ((message: ServerMessage | Error) => void)[] = [];
	#closedWith!: (closed: Closed) => void;
	#closeInfo: Closed | undefined;
	#fragments: Buffer[] = [];
	/** Bytes the kernel did not take yet, written on drain. */
	#unsent: Buffer[] = [];

	constructor() {
		this.closed = new Promise((resolve) => {
			this.#closedWith = resolve;
		});
	}

	handshake(): Promise<UpgradeAnswer> {
		return new Promise((resolve, reject) => {
			this.#answer = resolve;
			this.#fail = reject;
		});
	}

	async connect(hostname: string, port: number): Promise<void> {
		this.#tcp = await Bun.connect({
			hostname,
			port,
			socket: {
				data: (_socket, data) => this.#data(Buffer.from(data)),
				drain: () => this.#flush(),
				close: () => this.#socketClosed(),
				error: (_socket, error) => this.#fail?.(error),
			},
		});
	}

	/** Writes bytes in order; what the kernel does not take now is written when the socket drains. */
	write(bytes: Uint8Array): void {
		this.#unsent.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
		if (this.#unsent.length === 1) this.#flush();
	}

	/** Bytes written but not yet taken by the kernel. */
	get unsentBytes(): number {
		return this.#unsent.reduce((n, b) => n + b.length, 0);
	}

	#flush(): void {
		while (this.#unsent.length && this.#tcp) {
			const chunk = this.#unsent[0]!;
			const written = this.#tcp.write(chunk);
			if (written >= chunk.length) this.#unsent.shift();
			else {
				if (written > 0) this.#unsent[0] = chunk.subarray(written);
				return;
			}
		}
	}

	/** Sends a message as one text frame (JSON unless a string is given). */
	send(message: unknown): void {
		this.sendFrame(
			OPCODES.text,
			Buffer.from(typeof message === "string" ? message : JSON.stringify(message)),
		);
	}

	/** Sends several messages in one TCP write, so the server reads them in one go. */
	sendBatch(messages: unknown[]): void {
		const frames = messages.map((m) => this.frame(OPCODES.text, Buffer.from(JSON.stringify(m))));
		this.write(Buffer.concat(frames));
	}

	sendBinary(bytes: Uint8Array): void {
		this.sendFrame(OPCODES.binary, Buffer.from(bytes));
	}

	ping(payload = Buffer.alloc(0)): void {
		this.sendFrame(OPCODES.ping, payload);
	}

	/** Sends a close frame with a code and reason. */
	close(code = 1000, reason = ""): void {
		const payload = Buffer.alloc(2 + Buffer.byteLength(reason));
		payload.writeUInt16BE(code, 0);
		payload.write(reason, 2);
		this.sendFrame(OPCODES.close, payload);
	}

	/** Drops the TCP connection without a close frame. */
	terminate(): void {
		this.#tcp?.terminate();
	}

	/** Stops reading from the socket: the server's frames queue up behind TCP backpressure. */
	pause(): void {
		this.#tcp?.pause();
	}

	resume(): void {
		this.#tcp?.resume();
	}

	sendFrame(opcode: number, payload: Buffer, fin = true): void {
		this.write(this.frame(opcode, payload, fin));
	}

	/** One masked client frame. */
	frame(opcode: number, payload: Buffer, fin = true): Buffer {
		const mask = crypto.getRandomValues(new Uint8Array(4));
		const length = payload.length;
		const head = length < 126 ? 2 : length < 65536 ? 4 : 10;
		const frame = Buffer.alloc(head + 4 + length);
		frame[0] = (fin ? 0x80 : 0) | opcode;
		if (length < 126) frame[1] = 0x80 | length;
		else if (length < 65536) {
			frame[1] = 0x80 | 126;
			frame.writeUInt16BE(length, 2);
		} else {
			frame[1] = 0x80 | 127;
			frame.writeBigUInt64BE(BigInt(length), 2);
		}
		frame.set(mask, head);
		for (let i = 0; i < length; i++) frame[head + 4 + i] = payload[i]! ^ mask[i & 3]!;
		return frame;
	}

	/** The next message, whatever its type. */
	next(): Promise<ServerMessage> {
		const queued = this.#queue.shift();
		if (queued) return Promise.resolve(queued);
		if (this.#closeInfo) return Promise.reject(new Error(`the socket closed (${this.#closeInfo.code})`));
		return new Promise((resolve, reject) => {
			this.#waiters.push((message) => (message instanceof Error ? reject(message) : resolve(message)));
		});
	}

	/** The next message, which must be of this type. */
	async expect<T extends ServerMessage["type"]>(type: T): Promise<Extract<ServerMessage, { type: T }>> {
		const message = await this.next();
		if (message.type !== type)
			throw new Error(`expected ${type}, got ${JSON.stringify(message).slice(0, 300)}`);
		return message as Extract<ServerMessage, { type: T }>;
	}

	/** Skips messages until one of this type arrives. */
	async nextOf<T extends ServerMessage["type"]>(type: T): Promise<Extract<ServerMessage, { type: T }>> {
		for (;;) {
			const message = await this.next();
			if (message.type === type) return message as Extract<ServerMessage, { type: T }>;
		}
	}

	/** Messages already received and not yet taken. */
	get pending(): readonly ServerMessage[] {
		return this.#queue;
	}

	#data(chunk: Buffer): void {
		this.#buffer = this.#buffer.length ? Buffer.concat([this.#buffer, chunk]) : chunk;
		if (!this.#upgraded) this.#readResponse();
		if (this.#upgraded) this.#readFrames();
	}

	#readResponse(): void {
		const end = this.#buffer.indexOf("\r\n\r\n");
		if (end === -1) return;
		const [statusLine, ...headerLines] = this.#buffer.subarray(0, end).toString("latin1").split("\r\n");
		const status = Number(statusLine!.split(" ")[1]);
		const headers = new Headers();
		for (const line of headerLines) {
			const i = line.indexOf(":");
			headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
		}
		if (status === 101) {
			this.#buffer = this.#buffer.subarray(end + 4);
			this.#upgraded = true;
			this.#answer({ status, headers, body: "", socket: this });
			return;
		}
		const length = Number(headers.get("content-length") ?? 0);
		if (this.#buffer.length < end + 4 + length) return;
		const body = this.#buffer.subarray(end + 4, end + 4 + length).toString("utf8");
		this.#answer({ status, headers, body });
		this.#tcp?.end();
	}

	#readFrames(): void {
		for (;;) {
			const buffer = this.#buffer;
			if (buffer.length < 2) return;
			const fin = (buffer[0]! & 0x80) !== 0;
			const opcode = buffer[0]! & 0x0f;
			let length = buffer[1]! & 0x7f;
			let offset = 2;
			if (length === 126) {
				if (buffer.length < 4) return;
				length = buffer.readUInt16BE(2);
				offset = 4;
			} else if (length === 127) {
				if (buffer.length < 10) return;
				length = Number(buffer.readBigUInt64BE(2));
				offset = 10;
			}
			if (buffer.length < offset + length) return;
			const payload = buffer.subarray(offset, offset + length);
			this.#buffer = buffer.subarray(offset + length);
			this.#frame(opcode, fin, Buffer.from(payload));
		}
	}

	#frame(opcode: number, fin: boolean, payload: Buffer): void {
		if (opcode === OPCODES.ping) {
			this.pings++;
			if (this.autoPong) this.sendFrame(OPCODES.pong, payload);
			return;
		}
		if (opcode === OPCODES.pong) {
			this.pongs++;
			return;
		}
		if (opcode === OPCODES.close) {
			const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
			this.#setClosed({ code, reason: payload.subarray(2).toString("utf8") });
			return;
		}
		this.#fragments.push(payload);
		if (!fin) return;
		const whole = Buffer.concat(this.#fragments);
		this.#fragments = [];
		const parsed = parseServerFrame(whole.toString("utf8"), { features: this.features });
		if (!parsed.ok) throw new Error(`the server sent a frame a client cannot parse: ${parsed.error.message}`);
		const message = parsed.message;
		if (message.type === "attached") this.features = (message.features ?? []) as Feature[];
		this.received.push(message);
		const waiter = this.#waiters.shift();
		if (waiter) waiter(message);
		else this.#queue.push(message);
	}

	#setClosed(closed: Closed): void {
		if (this.#closeInfo) return;
		this.#closeInfo = closed;
		this.#closedWith(closed);
		for (const waiter of this.#waiters.splice(0)) waiter(new Error(`the socket closed (${closed.code})`));
		this.#tcp?.end();
	}

	#socketClosed(): void {
		if (!this.#upgraded) this.#fail?.(new Error("the connection closed before the upgrade was answered"));
		this.#setClosed({ code: 1006, reason: "" });
	}
}
