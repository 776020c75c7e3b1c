// The client's half of the daemon's control socket, without zod: one request line out, one answer line back, as JSON.
// ipc.ts checks both with its schemas; `chopin status` sends its request through here on its own (status-report.ts),
// so that a plain status never loads zod (docs/install.md § Start-up time).
import type { Clock } from "@chopin/agent-link/clock";
import { parseJsonWithin } from "@chopin/agent-link/json-depth";
import { CliError } from "../program/errors";
import { nothingAt } from "./socket-file";
import { type Connection, type ConnectionEvents, connectUnix } from "./unix-connection";

/** A request or response line longer than this is refused: nothing legitimate comes close. */
export const IPC_MAX_LINE_BYTES = 1024 * 1024;
const IPC_TIMEOUT_MS = 10_000;

const NOT_RUNNING_HINT = "Start it with `chopin run` or `chopin service install`.";

/** node:net, loaded on first use: Windows' named pipes and the daemon's stale-socket probe need it, a Unix client does not. */
export function ipcNet(): typeof import("node:net") {
	return require("node:net") as typeof import("node:net");
}

function notRunning(): CliError {
	return new CliError("daemon-not-running", "No chopin daemon is running.", NOT_RUNNING_HINT);
}

/**
 * Sends one request line and gives back the answer line's JSON. No daemon (no socket, or nothing
 * listening) is daemon-not-running naming the next command; an answer that is not JSON is a
 * daemon-protocol-error.
 */
export async function sendIpcLine(options: IpcClientOptions, request: unknown): Promise<unknown> {
	// Said before anything is set up for a connection: a plain status on a machine with no daemon does little else.
	if (!isNamedPipe(options.socket) && nothingAt(options.socket)) throw notRunning();
	const answer = parseJsonWithin(await exchange(options, `${JSON.stringify(request)}\n`));
	if (answer.ok) return answer.value;
	throw protocolError(
		answer.reason === "too-deep" ? "an answer nested too deep" : "an answer that is not JSON",
	);
}

export interface IpcClientOptions {
	socket: string;
	clock: Clock;
	timeoutMs?: number;
	/** Ctrl-C: stop waiting and end with `interrupted`. */
	signal?: AbortSignal;
}

function exchange(options: IpcClientOptions, payload: string): Promise<string> {
	return new Promise((resolve, reject) => {
		if (options.signal?.aborted) return reject(interrupted());
		let buffer = "";
		let settled = false;
		let connection: Connection | undefined;
		// Started once connected: no daemon is said at once, and a timer costs a plain `chopin status` ~1 ms.
		let timer: { cancel(): void } | undefined;
		const onAbort = () => finish(interrupted());
		const finish = (error: Error | undefined, line?: string) => {
			if (settled) return;
			settled = true;
			timer?.cancel();
			options.signal?.removeEventListener("abort", onAbort);
			connection?.close();
			if (error) reject(error);
			else resolve(line!);
		};
		const events: ConnectionEvents = {
			open: () => {
				if (settled) return;
				// Listened for once connected: a connection is made or refused at once, and the listener costs ~0.5 ms.
				if (options.signal?.aborted) return finish(interrupted());
				options.signal?.addEventListener("abort", onAbort, { once: true });
				timer = options.clock.setTimeout(() => {
					finish(
						new CliError(
							"daemon-not-responding",
							"The chopin daemon accepted the connection but did not answer.",
							"Check `chopin logs`; restart it with `chopin service install` or stop it and run `chopin run`.",
						),
					);
				}, options.timeoutMs ?? IPC_TIMEOUT_MS);
				connection?.write(payload);
			},
			data: (chunk) => {
				buffer += chunk;
				const newline = buffer.indexOf("\n");
				if (newline >= 0) finish(undefined, buffer.slice(0, newline));
				else if (buffer.length > IPC_MAX_LINE_BYTES) finish(protocolError("an answer longer than the limit"));
			},
			error: (error) => {
				if (error.code === "ENOENT" || error.code === "ECONNREFUSED") {
					finish(notRunning());
				} else if (error.code === "EACCES" || error.code === "EPERM") {
					finish(
						new CliError(
							"daemon-not-running",
							`The chopin daemon's socket ${options.socket} belongs to another user.`,
							"Run chopin as the user who started the daemon.",
						),
					);
				} else {
					finish(error);
				}
			},
			close: () => finish(protocolError("no answer before the connection closed")),
		};
		connection = isNamedPipe(options.socket)
			? connectNet(options.socket, events)
			: connectUnix(options.socket, events);
	});
}

function isNamedPipe(socket: string): boolean {
	return socket.startsWith("\\\\.\\pipe\\");
}

/** A Windows named pipe through node:net. */
function connectNet(path: string, events: ConnectionEvents): Connection {
	const socket = ipcNet().connect(path);
	socket.setEncoding("utf8");
	socket.on("connect", () => events.open());
	socket.on("data", (chunk: string) => events.data(chunk));
	socket.on("error", (error: NodeJS.ErrnoException) => events.error(error));
	socket.on("close", () => events.close());
	return { write: (text) => socket.write(text), close: () => socket.destroy() };
}

function interrupted(): CliError {
	return new CliError("interrupted", "Interrupted while waiting for the chopin daemon.");
}

export function protocolError(what: string): CliError {
	return new CliError(
		"daemon-protocol-error",
		`The chopin daemon sent ${what}.`,
		"The daemon may be a different chopin version: restart it (`chopin service install`, or stop it and `chopin run`).",
	);
}
