/**
 * For the client's own tests: a backend whose handlers record their calls and can be told how
 * to behave, and a link attached to a scripted server in this process.
 */
import { ManualClock } from "../clock";
import type { Feature } from "../features";
import { connectAgent } from "./connection";
import { DOCUMENT, TOKEN } from "./contract/harness";
import type { ScriptedConnection, ScriptedServer } from "./contract/scripted-server";
import type { AgentLink } from "./link";
import type { ConnectOptions, ControlAnswer, Handlers } from "./options";
import type { Session } from "./session";
import type { Turn } from "./turn";

export interface Recorder {
	handlers: Handlers;
	sessions: Session[];
	turns: Turn[];
	destroyed: string[];
	/** What each handler does; replace to change it. */
	behave: {
		start: (session: Session) => void | Promise<void>;
		turn: (turn: Turn) => void | Promise<void>;
		control: () => ControlAnswer | Promise<ControlAnswer>;
		steer?: (turn: Turn, prompt: string) => ControlAnswer | Promise<ControlAnswer>;
	};
}

export function recorder(): Recorder {
	const record: Recorder = {
		sessions: [],
		turns: [],
		destroyed: [],
		behave: { start: () => {}, turn: () => {}, control: () => ({ ok: true }) },
		handlers: {
			start: (session) => {
				record.sessions.push(session);
				return record.behave.start(session);
			},
			turn: (turn) => {
				record.turns.push(turn);
				return record.behave.turn(turn);
			},
			stop: () => record.behave.control(),
			resume: () => record.behave.control(),
			steer: (turn, prompt) => record.behave.steer?.(turn, prompt) ?? { ok: true },
			destroy: (session) => {
				record.destroyed.push(session.id);
			},
		},
	};
	return record;
}

/** A link to server on a ManualClock, and the server's side of it, attached with grant. */
export async function attachedLink(
	server: ScriptedServer,
	record: Recorder,
	options: Partial<ConnectOptions> & { grant?: Feature[] } = {},
): Promise<{ link: AgentLink; connection: ScriptedConnection; clock: ManualClock }> {
	const clock = new ManualClock();
	const linking = connectAgent({
		url: server.url,
		token: TOKEN,
		document: DOCUMENT,
		handlers: record.handlers,
		clock,
		...options,
	});
	const connection = await server.nextConnection();
	await connection.attach(options.grant);
	return { link: await linking, connection, clock };
}

let syncs = 0;

/**
 * Waits until the client has handled everything the server sent before it: a turn for a session
 * nobody holds is answered at once, after the messages before it.
 */
export async function sync(connection: ScriptedConnection): Promise<void> {
	const turn = `sync-${++syncs}`;
	connection.send({ type: "turn", session: "no-such-session", turn, prompt: "", tools: [] });
	const end = await connection.expect("turn-end");
	if (end.turn !== turn) throw new Error(`Expected the turn-end of ${turn}, got ${end.turn}.`);
}
