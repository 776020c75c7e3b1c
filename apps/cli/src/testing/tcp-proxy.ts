// A loopback TCP proxy that can fail like a network: delay(ms) forwards every byte and close late, in order;
// blackhole() holds (stops forwarding without closing anything:
// bytes and closes wait, new connections are accepted and left pending, restore() delivers all of it at once); drop()
// discards (bytes in either direction are thrown away, nothing is closed, new connections are accepted and never
// reach the server, so what was sent meanwhile is lost for good, as behind a middlebox that eats packets); cut()
// resets every connection and holds new ones; restore() forwards again.
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";

interface Pair {
	client: Socket;
	upstream: Socket | undefined;
	toUpstream: Buffer[];
	toClient: Buffer[];
	clientEnded: boolean;
	upstreamEnded: boolean;
	/** Accepted while bytes were dropped: it never reaches the server. */
	deadEnd?: boolean;
}

export class TcpProxy {
	readonly port: number;
	readonly #server: Server;
	readonly #target: { host: string; port: number };
	readonly #pairs = new Set<Pair>();
	#stalled = false;
	#dropping = false;
	#refusing = false;
	#delayMs = 0;
	readonly #late: { due: number; what: () => void }[] = [];
	#lateTimer: ReturnType<typeof setTimeout> | undefined;
	/** Connections accepted so far (each is one attempt of the client's). */
	accepted = 0;

	private constructor(server: Server, port: number, target: { host: string; port: number }) {
		this.#server = server;
		this.port = port;
		this.#target = target;
	}

	static async start(target: { host: string; port: number }): Promise<TcpProxy> {
		let proxy: TcpProxy | undefined;
		const server = createServer((client) => proxy?.accept(client));
		await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
		const port = (server.address() as { port: number }).port;
		proxy = new TcpProxy(server, port, target);
		return proxy;
	}

	get url(): string {
		return `http://127.0.0.1:${this.port}`;
	}

	get stalled(): boolean {
		return this.#stalled;
	}

	/** Stops forwarding in both directions; nothing is closed and nothing is lost. */
	blackhole(): void {
		this.#stalled = true;
	}

	/** Discards every byte in both directions from now on, and what is held; nothing is closed. */
	drop(): void {
		this.#stalled = true;
		this.#dropping = true;
		for (const pair of this.#pairs) {
			pair.toUpstream.length = 0;
			pair.toClient.length = 0;
		}
	}

	/**
	 * Forwards every chunk and end ms late from now on (0: at once again), in order in each direction:
	 * a slow link, not a dead one. Holding, dropping and cutting still apply when a late chunk comes due.
	 */
	delay(ms: number): void {
		this.#delayMs = ms;
	}

	/** Runs what arrived now after the current delay, never before what arrived earlier (one queue, in order). */
	#later(what: () => void): void {
		if (this.#delayMs <= 0 && this.#late.length === 0) {
			what();
			return;
		}
		this.#late.push({ due: Date.now() + this.#delayMs, what });
		this.#schedule();
	}

	#schedule(): void {
		if (this.#lateTimer || this.#late.length === 0) return;
		this.#lateTimer = setTimeout(
			() => {
				this.#lateTimer = undefined;
				while (this.#late.length && this.#late[0]!.due <= Date.now()) this.#late.shift()!.what();
				this.#schedule();
			},
			Math.max(0, this.#late[0]!.due - Date.now()),
		);
	}

	/** New connections are reset at once, as by a host with nothing listening, until restore(). */
	refuse(): void {
		this.#refusing = true;
	}

	/** Drops every open connection (both ends see it reset) and holds new ones until restore(). */
	cut(): void {
		this.#stalled = true;
		for (const pair of this.#pairs) {
			pair.client.destroy();
			pair.upstream?.destroy();
		}
		this.#pairs.clear();
	}

	/** Forwards again: pending connections reach the server, held bytes and closes are delivered. */
	restore(): void {
		this.#stalled = false;
		this.#refusing = false;
		const dropped = this.#dropping;
		this.#dropping = false;
		for (const pair of this.#pairs) {
			// A connection made while bytes were dropped never reached the server: it stays a dead end.
			if (!pair.upstream && !(dropped && pair.deadEnd)) this.#open(pair);
			this.#flush(pair);
		}
	}

	async close(): Promise<void> {
		clearTimeout(this.#lateTimer);
		this.#late.length = 0;
		for (const pair of this.#pairs) {
			pair.client.destroy();
			pair.upstream?.destroy();
		}
		this.#pairs.clear();
		await new Promise<void>((resolve) => this.#server.close(() => resolve()));
	}

	accept(client: Socket): void {
		this.accepted += 1;
		if (this.#refusing) {
			client.resetAndDestroy();
			return;
		}
		const pair: Pair = {
			client,
			upstream: undefined,
			toUpstream: [],
			toClient: [],
			clientEnded: false,
			upstreamEnded: false,
		};
		this.#pairs.add(pair);
		client.on("data", (data: Buffer) =>
			this.#later(() => {
				if (this.#dropping) return;
				pair.toUpstream.push(data);
				this.#flush(pair);
			}),
		);
		const clientEnded = () =>
			this.#later(() => {
				pair.clientEnded = true;
				this.#flush(pair);
			});
		client.on("end", clientEnded);
		client.on("error", () => {});
		client.on("close", clientEnded);
		if (this.#dropping) pair.deadEnd = true;
		else if (!this.#stalled) this.#open(pair);
	}

	#open(pair: Pair): void {
		const upstream = tcpConnect(this.#target.port, this.#target.host);
		pair.upstream = upstream;
		upstream.on("connect", () => this.#flush(pair));
		upstream.on("data", (data: Buffer) =>
			this.#later(() => {
				if (this.#dropping) return;
				pair.toClient.push(data);
				this.#flush(pair);
			}),
		);
		const ended = () =>
			this.#later(() => {
				pair.upstreamEnded = true;
				this.#flush(pair);
			});
		upstream.on("end", ended);
		upstream.on("close", ended);
		upstream.on("error", () => {});
	}

	#flush(pair: Pair): void {
		if (this.#stalled) return;
		const { client, upstream } = pair;
		if (upstream && !upstream.connecting && !upstream.destroyed) {
			for (const chunk of pair.toUpstream.splice(0)) upstream.write(chunk);
			if (pair.clientEnded) upstream.end();
		}
		if (!client.destroyed) {
			for (const chunk of pair.toClient.splice(0)) client.write(chunk);
			if (pair.upstreamEnded) client.end();
		}
		if (pair.clientEnded && pair.upstreamEnded) this.#pairs.delete(pair);
	}
}
