// session-forks: where a thread's Planner session branches from (docs/chat.md, Threads). Each person's message
// whose turn finished keeps the session and turn that answered it; a thread forks from the newest such point
// before its new message (the thread's own earlier turns first, else its root's). Retry forgets a message's point,
// so a thread forked later from the retried message branches from the retried turn, never the failed one.
import { z } from "zod";
import type { MessageView } from "../chat/message-view";
import type { Db } from "../store/store";

export interface ForkPoint {
	session: string;
	turn: string;
}

const pointRow = z.object({ session: z.string(), turn: z.string() });

/**
 * Records (or replaces) the turn that answered a person's message, in one statement: a reader sees the old point or
 * the new, never neither, and a crash cannot forget it halfway (a delete then an insert could, two commits apart).
 */
export async function recordForkPoint(
	db: Db,
	messageId: string,
	point: ForkPoint,
	now: number,
): Promise<void> {
	await db.sql`INSERT INTO chat_fork_points ${db.sql({
		message_id: messageId,
		session: point.session,
		turn: point.turn,
		recorded_at: now,
	})} ON CONFLICT (message_id) DO UPDATE SET session = excluded.session, turn = excluded.turn,
		recorded_at = excluded.recorded_at`;
}

/** Retry: the failed attempt's point, if it left one, is forgotten before the message runs again. */
export async function forgetForkPoint(db: Db, messageId: string): Promise<void> {
	await db.sql`DELETE FROM chat_fork_points WHERE message_id = ${messageId}`;
}

/**
 * What a turn for a message of the thread on `root` forks from: the newest point among the thread's messages
 * before seq `before`, else the root's own (a Planner reply as root: the point of the message it answered).
 * Undefined when there is none: the thread then starts afresh with its transcript.
 */
export async function forkSource(
	db: Db,
	root: Pick<MessageView, "id" | "replyTo" | "role">,
	before: number,
): Promise<ForkPoint | undefined> {
	const inThread = await db.one(
		db.sql`SELECT p.session, p.turn FROM chat_fork_points p JOIN chat_messages m ON m.id = p.message_id
			WHERE m.thread_root = ${root.id} AND m.seq < ${before} ORDER BY m.seq DESC LIMIT 1`,
		pointRow,
	);
	if (inThread) return inThread;
	const asked = root.role === "planner" ? root.replyTo : root.id;
	if (!asked) return undefined;
	return db.one(db.sql`SELECT session, turn FROM chat_fork_points WHERE message_id = ${asked}`, pointRow);
}
