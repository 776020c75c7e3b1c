// The daemon's side of its control socket, the transport only: Bun.listen for a Unix socket, node:net for a Windows named
// pipe. What a connection's lines mean and what is answered is ipc.ts (serveLines).
import type { Socket } from "node:net";
import { ipcNet } from "./ipc-transport";
import type { Logger } from "./log";
import { SocketWrites } from "./unix-connection";

export interface Listener {
	socket: string;
	/** A connection's reader: given where its answers go, takes each chunk of text it sends. */
	serve(channel: AnswerChannel): (chunk: string) => void;
	/** The error for a socket another process listens on. */
	inUse(): Error;
	log?: Logger | undefined;
}

/** Where a connection's answers go: a Bun socket (Unix) or a node:net one (a Windows named pipe). */
export interface AnswerChannel {
	write(text: string): void;
	/** Writes the text, then closes the connection. */
	end(text: string): void;
	readonly closed: boolean;
}

/**
 * The Unix socket through Bun.listen, not node:net: node:net's stream layer cost the daemon ~0.5 ms of
 * JavaScript per connection and doubled its median answer to a waiting `chopin status` (docs/performance.md,
 * The daemon's status answer). Gives back what closes it and its connections.
 */
export function listenUnix({ socket, serve, inUse, log }: Listener): () => Promise<void> {
	type Connection = { lines: (chunk: string) => void; decoder: TextDecoder; channel: BunChannel };
	let server: Bun.UnixSocketListener<Connection>;
	try {
		server = Bun.listen<Connection>({
			unix: socket,
			socket: {
				open(opened) {
					const channel = new BunChannel(opened);
					opened.data = { lines: serve(channel), decoder: new TextDecoder(), channel };
				},
				data: (opened, chunk) => opened.data.lines(opened.data.decoder.decode(chunk, { stream: true })),
				drain: (opened) => opened.data.channel.flush(),
				close: (opened) => opened.data?.channel.closeNow(),
				error: (_, error) => log?.debug({ err: error }, "control connection failed"),
			},
		});
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") throw inUse();
		throw error;
	}
	return async () => server.stop(true);
}

/** A Bun socket's answers: what the socket did not take yet is written as it drains, and an end waits for it. */
class BunChannel implements AnswerChannel {
	private readonly writes: SocketWrites;
	private ending = false;
	closed = false;

	constructor(private readonly socket: Bun.Socket<unknown>) {
		this.writes = new SocketWrites(socket);
	}

	write(text: string): void {
		if (!this.closed && !this.ending) this.writes.write(text);
	}

	end(text: string): void {
		this.write(text);
		this.ending = true;
		if (this.writes.done) this.socket.end();
	}

	flush(): void {
		if (this.closed || this.writes.done) return;
		this.writes.flush();
		if (this.writes.done && this.ending) this.socket.end();
	}

	closeNow(): void {
		this.closed = true;
	}
}

/** A Windows named pipe through node:net. Gives back what closes it and its connections. */
export async function listenNet({ socket, serve, inUse, log }: Listener): Promise<() => Promise<void>> {
	const sockets = new Set<Socket>();
	const server = ipcNet().createServer((connection) => {
		sockets.add(connection);
		connection.on("close", () => sockets.delete(connection));
		connection.setEncoding("utf8");
		const lines = serve({
			write: (text) => connection.write(text),
			end: (text) => connection.end(text),
			get closed() {
				return connection.destroyed;
			},
		});
		connection.on("data", lines);
		connection.on("error", (error) => log?.debug({ err: error }, "control connection failed"));
	});
	await new Promise<void>((resolve, reject) => {
		server.once("error", (error: NodeJS.ErrnoException) => {
			if (error.code === "EADDRINUSE") reject(inUse());
			else reject(error);
		});
		server.listen(socket, () => resolve());
	});
	return async () => {
		for (const connection of sockets) connection.destroy();
		await new Promise<void>((resolve) => server.close(() => resolve()));
	};
}
