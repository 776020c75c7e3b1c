// The session a Chat turn runs in, and the instructions it reads. On the main Chat: a fresh start with the bounded
// transcript. In a thread with session-forks: a fork of the session that answered the thread's newest point (see
// fork-points.ts), given only what the thread gained since; a fork refused with start-failed, or no point to fork
// from, falls back to start with the transcript up to the thread's root, then the thread (spec: fork).
import type { MessageView } from "../chat/message-view";
import type { AttachedPlanner } from "./attached";
import { forkSource } from "./fork-points";
import { forkedInstructions, plannerInstructions } from "./instructions";
import { type PlannerSession, StartFailed } from "./sessions";

export interface TurnSession {
	session: PlannerSession;
	instructions: string;
}

/** Opens the turn's session; rejects StartFailed when the client refuses the start (or the fallback start). */
export async function openTurnSession(
	planner: AttachedPlanner,
	turn: { before: number; thread?: MessageView },
): Promise<TurnSession> {
	const { domain, store, log } = planner.deps;
	const documentId = planner.document.id;
	const { thread } = turn;
	// The transcript is read while the client starts the session: the turn waits for the longer of the two.
	const reading = domain.chat.chatContext(documentId, {
		before: turn.before,
		...(thread && { thread: { root: thread.id, rootSeq: thread.seq } }),
	});
	reading.catch(() => {});
	const instructed = thread && { rootLine: `@${thread.authorLogin ?? "chopin"}: ${thread.body}` };
	if (thread && instructed && planner.link.features.has("session-forks")) {
		const from = await forkSource(store, thread, turn.before);
		if (from) {
			try {
				const session = await planner.startSession("planner", from);
				const context = await read(planner, session, reading);
				return {
					session,
					instructions: forkedInstructions(planner.document, instructed, context.backscroll),
				};
			} catch (error) {
				if (!(error instanceof StartFailed)) throw error;
				// Such as a source session the client no longer holds: the thread starts afresh from its transcript.
				log.info("fork refused, the thread's session starts afresh", {
					document: documentId,
					from: from.session,
					reason: error.message,
				});
			}
		}
	}
	const session = await planner.startSession("planner");
	const context = await read(planner, session, reading);
	return { session, instructions: plannerInstructions(planner.document, context.transcript, instructed) };
}

/** The transcript read beside the start; a session started for a turn that cannot have it ends. */
async function read<T>(planner: AttachedPlanner, session: PlannerSession, reading: Promise<T>): Promise<T> {
	try {
		return await reading;
	} catch (error) {
		planner.release(session);
		throw error;
	}
}
