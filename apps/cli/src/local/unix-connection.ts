// One Unix-socket connection through Bun.connect, as the control socket's clients use it (ipc-transport.ts, and
// status-by-daemon.ts on its own): events for open, text, errors and close, writes that wait for the socket to drain,
// and a close that holds even when it comes before the connection is open.

/** One connection: ipc-transport.ts gives a named pipe the same shape. */
export interface Connection {
	write(text: string): void;
	close(): void;
}

export interface ConnectionEvents {
	open(): void;
	data(text: string): void;
	error(error: NodeJS.ErrnoException): void;
	close(): void;
	/** Nothing heard for `timeoutSeconds` after the connection opened (Bun's socket timeouts: whole seconds). */
	timeout?(): void;
}

/**
 * A Unix socket through Bun.connect: node:net would load Node's stream modules (~5 ms of
 * `chopin status`; docs/install.md § Start-up time).
 */
export function connectUnix(
	path: string,
	events: ConnectionEvents,
	options: { timeoutSeconds?: number } = {},
): Connection {
	const decoder = new TextDecoder();
	let socket: Bun.Socket | undefined;
	let closed = false;
	let writes: SocketWrites | undefined;
	Bun.connect({
		unix: path,
		socket: {
			open(opened) {
				socket = opened;
				writes = new SocketWrites(opened);
				if (closed) {
					opened.end();
					return;
				}
				if (options.timeoutSeconds) opened.timeout(options.timeoutSeconds);
				events.open();
			},
			data: (_, chunk) => events.data(decoder.decode(chunk, { stream: true })),
			drain: () => writes?.flush(),
			error: (_, error) => events.error(error as NodeJS.ErrnoException),
			close: () => events.close(),
			timeout: () => events.timeout?.(),
		},
	}).catch((error: NodeJS.ErrnoException) => events.error(error));
	return {
		write(text) {
			writes?.write(text);
		},
		close() {
			closed = true;
			socket?.end();
		},
	};
}

/** Text written to a Bun socket: what it did not take yet is kept and written as it drains (flush()), in order. */
export class SocketWrites {
	#pending = new Uint8Array(0);

	constructor(private readonly socket: Bun.Socket<unknown>) {}

	/** Whether everything written so far has been taken. */
	get done(): boolean {
		return this.#pending.length === 0;
	}

	write(text: string): void {
		if (!this.done) {
			const more = new TextEncoder().encode(text);
			const joined = new Uint8Array(this.#pending.length + more.length);
			joined.set(this.#pending);
			joined.set(more, this.#pending.length);
			this.#pending = joined;
			return;
		}
		// The text as it is (a TextEncoder costs a plain status ~0.2 ms); its bytes only when the socket took part of it.
		const written = this.socket.write(text);
		if (written < Buffer.byteLength(text))
			this.#pending = new TextEncoder().encode(text).subarray(Math.max(0, written));
	}

	flush(): void {
		if (this.done) return;
		this.#pending = this.#pending.subarray(Math.max(0, this.socket.write(this.#pending)));
	}
}
