// A run's ACP agent driven through the official SDK's client side: initialize, one session in the run's workspace
// with Chopin's MCP server attached (over HTTP when the agent says it speaks it, else the stdio bridge), the
// prompt, its updates handed on in order, permission requests to the run's policy, and cancel.
import {
	client,
	type McpServer,
	methods,
	ndJsonStream,
	PROTOCOL_VERSION,
	type RequestPermissionRequest,
	type RequestPermissionResponse,
	type SessionUpdate,
	type StopReason,
} from "@agentclientprotocol/sdk";
import type { Clock } from "@chopin/agent-link/clock";

/** How long the agent has to answer initialize and session/new: a first `npx` of an agent may download it. */
export const AGENT_START_TIMEOUT_MS = 120_000;

export interface AgentStreams {
	/** What we write to the agent's stdin. */
	stdin: { write(chunk: Uint8Array): void; end(): void };
	/** The agent's stdout. */
	stdout: ReadableStream<Uint8Array>;
}

export interface ChopinMcp {
	/** The server's /mcp URL. */
	url: string;
	/** The run's credential (sent as a header over HTTP, or in the bridge's environment). */
	token: string;
	/** The command that runs `chopin bridge` (this binary), for an agent without HTTP MCP. */
	bridge: readonly string[];
	/** The server's origin, for the bridge (CHOPIN_URL). */
	server: string;
}

export interface AcpSessionOptions {
	streams: AgentStreams;
	/** The run's workspace: the session's cwd. */
	cwd: string;
	mcp: ChopinMcp;
	version: string;
	onUpdate(update: SessionUpdate): void | Promise<void>;
	onPermission(request: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse>;
	/**
	 * Rejects when the start (initialize, session/new) has taken too long: the agent hanging at start is a failed
	 * run, not a stuck one. A run makes its own, which does not count time it spent paused (startLimit()).
	 */
	startLimit: Promise<never>;
}

export interface AcpSession {
	readonly sessionId: string;
	/** How Chopin's MCP server reached the agent. */
	readonly mcpTransport: "http" | "stdio";
	/** Sends the prompt; resolves with the stop reason once the turn ends (rejects when the agent goes away). */
	prompt(text: string): Promise<StopReason>;
	/** session/cancel: the agent ends the turn with `cancelled` (pending permission requests are answered cancelled). */
	cancel(): Promise<void>;
	/** Closes the connection (pending requests reject). */
	close(): void;
	/** Settles when the connection closed (the agent exited or close() was called). */
	readonly closed: Promise<void>;
}

/** The MCP server entry for the session: HTTP with the credential as a header, or the bridge with it in its env. */
export function chopinMcpServer(mcp: ChopinMcp, http: boolean): McpServer {
	if (http) {
		return {
			type: "http",
			name: "chopin",
			url: mcp.url,
			headers: [{ name: "Authorization", value: `Bearer ${mcp.token}` }],
		};
	}
	const [command, ...args] = mcp.bridge;
	return {
		name: "chopin",
		command: command!,
		args: [...args, "bridge"],
		env: [
			{ name: "CHOPIN_URL", value: mcp.server },
			{ name: "CHOPIN_RUN_TOKEN", value: mcp.token },
		],
	};
}

/** Connects to the agent, initializes it and opens the run's session. */
export async function startAcpSession(options: AcpSessionOptions): Promise<AcpSession> {
	const { streams } = options;
	const toAgent = new WritableStream<Uint8Array>({
		write: (chunk) => streams.stdin.write(chunk),
		close: () => streams.stdin.end(),
		abort: () => streams.stdin.end(),
	});
	// Updates are handed on one at a time, in the order they came (the SDK may run async handlers concurrently).
	let chain: Promise<void> = Promise.resolve();
	const app = client({ name: "chopin" })
		.onNotification(methods.client.session.update, ({ params }) => {
			chain = chain.then(() => options.onUpdate(params.update)).catch(() => {});
		})
		.onRequest(methods.client.session.requestPermission, ({ params, signal }) =>
			options.onPermission(params, signal),
		);
	const connection = app.connect(ndJsonStream(toAgent, streams.stdout));
	const limit = options.startLimit;
	limit.catch(() => {});
	try {
		const init = await Promise.race([
			connection.agent.request(methods.agent.initialize, {
				protocolVersion: PROTOCOL_VERSION,
				clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
				clientInfo: { name: "chopin", version: options.version },
			}),
			limit,
		]);
		const http = init.agentCapabilities?.mcpCapabilities?.http === true;
		const created = await Promise.race([
			connection.agent.request(methods.agent.session.new, {
				cwd: options.cwd,
				mcpServers: [chopinMcpServer(options.mcp, http)],
			}),
			limit,
		]);
		const sessionId = created.sessionId;
		return {
			sessionId,
			mcpTransport: http ? "http" : "stdio",
			async prompt(text) {
				const response = await connection.agent.request(methods.agent.session.prompt, {
					sessionId,
					prompt: [{ type: "text", text }],
				});
				await chain;
				return response.stopReason;
			},
			cancel: () => connection.agent.notify(methods.agent.session.cancel, { sessionId }).catch(() => {}),
			close: () => connection.close(),
			closed: connection.closed,
		};
	} catch (error) {
		connection.close();
		throw error;
	}
}

/**
 * A start limit on the clock: rejects after `ms`, counting only time for which `counts()` is true (a paused run's
 * time does not count); `signal` ends it quietly once the start is over.
 */
export async function startLimit(
	clock: Clock,
	options: { ms?: number; counts?: () => boolean; signal: AbortSignal },
): Promise<never> {
	const ms = options.ms ?? AGENT_START_TIMEOUT_MS;
	let left = ms;
	while (left > 0) {
		const step = Math.min(1000, left);
		try {
			await clock.sleep(step, options.signal);
		} catch {
			return new Promise<never>(() => {});
		}
		if (options.counts?.() ?? true) left -= step;
	}
	throw new Error(`the agent did not answer within ${Math.round(ms / 1000)} s of starting`);
}
