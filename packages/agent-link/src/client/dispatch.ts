/**
 * What the client does with each message of a live link: it calls the backend's handlers and
 * answers for them (started, turn-end, control-result, input-received), keeping the 10-second
 * answers on the client's clock.
 */
import { TIMING } from "../protocol";
import type { ServerMessage } from "../schemas/server-messages";
import { cutNote } from "../text";
import type { Connection } from "./connection";
import { messageOf } from "./deferred";
import type { ControlAnswer } from "./options";
import { Session } from "./session";

export function dispatchLive(link: Connection, message: ServerMessage): void {
	switch (message.type) {
		case "start": {
			const session = new Session(message.session, message.mode, undefined, link);
			startSession(link, session, () => link.handlers.start(session));
			break;
		}
		case "fork": {
			const session = new Session(message.session, message.mode, message.from, link);
			const fork = link.handlers.fork;
			startSession(link, session, () => {
				if (!fork) throw new Error("This client cannot fork sessions.");
				return fork.call(link.handlers, session);
			});
			break;
		}
		case "turn": {
			const session = link.sessions.get(message.session);
			if (session && !session.ended) {
				void session.openTurn(message).run(link.handlers.turn.bind(link.handlers));
			} else {
				const { session: id, turn } = message;
				const failure = "This client holds no such session.";
				link.sendQuietly({ type: "turn-end", session: id, turn, status: "failed", message: failure });
			}
			break;
		}
		case "abort":
			link.sessions.get(message.session)?.turn(message.turn)?.abortByServer();
			break;
		case "steer":
			steerTurn(link, message.request, message.session, message.turn, message.prompt);
			break;
		case "host-tool-result":
			link.sessions.get(message.session)?.turn(message.turn)?.hostResult(message);
			break;
		case "input-result":
			for (const session of link.sessions.values()) {
				if (session.settleQuestion(message)) break;
			}
			// Every result is acknowledged, a repeat for a settled question too (spec: input-received).
			if (link.features.has("resumable-sessions")) {
				link.sendQuietly({ type: "input-received", request: message.request });
			}
			break;
		case "stop":
		case "resume": {
			const session = link.sessions.get(message.session);
			const handler = message.type === "stop" ? link.handlers.stop : link.handlers.resume;
			// A late answer to stop or resume still counts, so neither has a cut-off.
			if (session)
				answerControl(link, message.request, () => handler.call(link.handlers, session, message.run));
			else refuseControl(link, message.request, "This client holds no such session.");
			break;
		}
		case "destroy": {
			const session = link.sessions.get(message.session);
			if (session) endSession(link, session, "The session ended.");
			break;
		}
		case "restarting":
			link.restarting(message.reconnectWithinMs);
			break;
		case "refused":
			link.noteRefused({ code: message.code, message: message.message, retry: message.retry === true });
			break;
		case "error":
			link.noteError({ code: message.code, message: message.message, by: "server" });
			break;
		case "attached":
		case "resumed":
			link.malformed(`The server sent ${message.type} on a link that was already ready.`);
			break;
	}
}

/** steer (steer-turn): the handler answers within 10 seconds, or the client answers ok: false. */
function steerTurn(link: Connection, request: string, session: string, turnId: string, prompt: string): void {
	const turn = link.sessions.get(session)?.turn(turnId);
	const steer = link.handlers.steer;
	if (!turn || turn.ended) refuseControl(link, request, "The turn has ended.");
	else if (!steer) refuseControl(link, request, "This client cannot hand a message to a running turn.");
	else {
		answerControl(link, request, () => steer.call(link.handlers, turn, prompt), {
			cutoff: "The turn did not take the message within 10 seconds.",
		});
	}
}

/** Ends a session once, and tells the backend (handlers.destroy). */
export function endSession(link: Connection, session: Session, reason: string): void {
	link.sessions.delete(session.id);
	if (!session.end(reason)) return;
	const destroy = link.handlers.destroy;
	if (!destroy) return;
	Promise.resolve()
		.then(() => destroy.call(link.handlers, session))
		.catch((error) => link.report(error));
}

/** started or start-failed for start and fork; after 10 seconds the client answers start-failed itself. */
function startSession(link: Connection, session: Session, run: () => void | Promise<void>): void {
	if (link.sessions.has(session.id)) {
		const message = "This client already holds that session.";
		link.sendQuietly({ type: "start-failed", session: session.id, message });
		return;
	}
	link.sessions.set(session.id, session);
	let answered = false;
	const answer = (failure?: string) => {
		if (answered || session.ended) return;
		answered = true;
		timer.cancel();
		if (failure === undefined) {
			link.sendQuietly({ type: "started", session: session.id });
			session.started();
		} else {
			link.sendQuietly({ type: "start-failed", session: session.id, message: cutNote(failure) });
			session.startFailed();
		}
	};
	// A session that failed to start stays until the server's destroy, which tells the backend.
	const timer = link.setTimer(
		() => answer("The backend did not start the session within 10 seconds."),
		TIMING.answerWithinMs,
	);
	Promise.resolve()
		.then(run)
		.then(
			() => answer(),
			(error) => answer(messageOf(error)),
		);
}

function answerControl(
	link: Connection,
	request: string,
	run: () => ControlAnswer | Promise<ControlAnswer>,
	options: { cutoff?: string } = {},
): void {
	let answered = false;
	const answer = (ok: boolean, message?: string) => {
		if (answered) return;
		answered = true;
		timer?.cancel();
		const text = message === undefined ? {} : { message: cutNote(message) };
		link.sendQuietly({ type: "control-result", request, ok, ...text });
	};
	const cutoff = options.cutoff;
	const timer =
		cutoff === undefined ? undefined : link.setTimer(() => answer(false, cutoff), TIMING.answerWithinMs);
	Promise.resolve()
		.then(run)
		.then(
			(result) =>
				answer(result?.ok === true, typeof result?.message === "string" ? result.message : undefined),
			(error) => answer(false, messageOf(error)),
		);
}

function refuseControl(link: Connection, request: string, message: string): void {
	link.sendQuietly({ type: "control-result", request, ok: false, message });
}
