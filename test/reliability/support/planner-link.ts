// The Planner side for the reliability suite: the package's reference client attached to a document through a
// TcpProxy, reattaching after every drop (reconnectAgent on a fast backoff; with resume when the server granted
// resumable-sessions), counting every server message that reached it and every message it sent, whatever socket
// carried it.
import { Backoff } from "../../../packages/agent-link/src/backoff";
import {
	type AgentLink,
	type ConnectOptions,
	connectAgent,
	type LinkClosed,
	type RunsReport,
	reconnectAgent,
	type Session,
} from "../../../packages/agent-link/src/client/index";

/** A server message as the client read it off a socket. */
export type Received = { type: string } & Record<string, unknown>;

export interface PlannerLink {
	/** Every server message received, on every socket, in order. */
	readonly received: Received[];
	/** Every message the client wrote, on every socket, in order (one written into a dead socket too). */
	readonly sent: Received[];
	/** Turn prompts the backend was handed. */
	readonly turns: string[];
	/** Stops the backend was handed (session, run). */
	readonly stops: { session: string; run?: string }[];
	/** Links attached so far (1 + the reattachments). */
	readonly attaches: number;
	/** The sessions the server started. */
	readonly sessions: Session[];
	/** The link now (a new one after each reattachment). */
	link(): AgentLink;
	/** Messages of a type received so far, optionally only those matching. */
	count(type: string, match?: (message: Received) => boolean): number;
	/** Reported after each attach for every live session, so the server knows the runs the session holds. */
	runs: RunsReport | undefined;
	/** Detaches and stops reattaching. */
	close(): Promise<void>;
	/** How the last link ended for good (a refusal or error), if it did. */
	readonly ended: LinkClosed | undefined;
	/** How each link closed, in order. */
	readonly closes: LinkClosed[];
	/** Ends the current socket abruptly from this side (no close frame), as a client process dying would. */
	cut(): void;
}

/** A retry schedule for tests: the real rule, on short delays. */
const FAST = () => Backoff.schedule([50, 100, 200, 400]);

export async function attachPlanner(options: {
	url: string;
	token: string;
	document: string;
	/** Runs inside the turn handler, after the prompt is recorded; the turn ends finished after it. */
	onTurn?: (session: Session, prompt: string) => void | Promise<void>;
	/** Awaited after each close before reconnecting: the test decides when the client comes back. */
	beforeReconnect?: (closed: LinkClosed) => Promise<void>;
}): Promise<PlannerLink> {
	const received: Received[] = [];
	const sent: Received[] = [];
	const turns: string[] = [];
	const stops: { session: string; run?: string }[] = [];
	const sessions: Session[] = [];
	const closes: LinkClosed[] = [];
	let socket: WebSocket | undefined;
	/** Bun's WebSocket with a listener of its own on every frame: what this side received, before the client. */
	class CountingWebSocket extends WebSocket {
		constructor(url: string, init: { protocols: string[]; headers: Record<string, string> }) {
			super(url, init as never);
			socket = this;
			this.addEventListener("message", (event) => {
				if (typeof event.data === "string") received.push(JSON.parse(event.data) as Received);
			});
		}

		override send(data: string | ArrayBufferLike | ArrayBufferView | Blob): void {
			if (typeof data === "string") sent.push(JSON.parse(data) as Received);
			super.send(data as never);
		}
	}
	let closing = false;
	const abort = new AbortController();
	const state: { link: AgentLink; attaches: number; ended?: LinkClosed; runs?: RunsReport } = {
		link: undefined as never,
		attaches: 0,
	};
	const connectOptions: ConnectOptions = {
		url: options.url,
		token: options.token,
		document: options.document,
		WebSocket: CountingWebSocket as never,
		handlers: {
			start: (session) => {
				sessions.push(session);
			},
			turn: async (turn) => {
				turns.push(turn.prompt);
				await options.onTurn?.(turn.session, turn.prompt);
			},
			stop: (session, run) => {
				stops.push({ session: session.id, ...(run && { run }) });
				return { ok: true };
			},
			resume: () => ({ ok: true }),
		},
	};
	const attached = (link: AgentLink) => {
		state.link = link;
		state.attaches += 1;
		if (state.runs) for (const session of link.sessions.values()) session.reportRuns(state.runs);
	};
	attached(await connectAgent(connectOptions));
	const keeping = (async () => {
		for (;;) {
			const closed = await state.link.closed;
			closes.push(closed);
			if (closing) return;
			if (closed.error || (closed.refused && !closed.refused.retry)) {
				state.ended = closed;
				return;
			}
			try {
				const aborted = new Promise<void>((resolve) =>
					abort.signal.addEventListener("abort", () => resolve()),
				);
				await Promise.race([options.beforeReconnect?.(closed), aborted]);
				if (closing) return;
				attached(
					await reconnectAgent(connectOptions, closed, {
						backoff: FAST(),
						signal: abort.signal,
						// Through refusals too (a restarted server wants the owner's browser back first): the test
						// decides when the link may come back, and detaches to end it.
						shouldRetry: () => !closing,
					}),
				);
			} catch (error) {
				if (!closing) state.ended = { code: 0, reason: String(error) };
				return;
			}
		}
	})();
	return {
		received,
		sent,
		turns,
		stops,
		sessions,
		get attaches() {
			return state.attaches;
		},
		get ended() {
			return state.ended;
		},
		closes,
		cut: () => (socket as WebSocket & { terminate(): void }).terminate(),
		get runs() {
			return state.runs;
		},
		set runs(report) {
			state.runs = report;
		},
		link: () => state.link,
		count: (type, match) => received.filter((m) => m.type === type && (!match || match(m))).length,
		async close() {
			closing = true;
			abort.abort();
			await state.link.detach().catch(() => {});
			await keeping;
		},
	};
}
