// The part of a document's Chat a Planner turn is given, within hosted-agent.md's "Chat context" bounds:
// the backscroll since the Planner's last turn, and the transcript a new session starts from.
import { codePointLength } from "@chopin/agent-link";
import type { z } from "zod";
import type { Db } from "../store/store";
import { PLANNER_HANDLE } from "./mentions";
import { messageRow } from "./message-rows";

/** Backscroll: at most 40 entries and normally 8,000 characters (one message is kept whole even if larger). */
export const BACKSCROLL_MAX_ENTRIES = 40;
export const BACKSCROLL_MAX_CHARS = 8_000;
/** A recreated session's transcript: at most the last 100 entries and 50,000 characters. */
export const TRANSCRIPT_MAX_ENTRIES = 100;
export const TRANSCRIPT_MAX_CHARS = 50_000;

export interface ContextEntry {
	messageId: string;
	seq: number;
	role: "person" | "planner";
	/** The person's login, or "chopin" for the Planner's own replies. */
	login: string;
	text: string;
	/** What the model reads: `@login: text`, so each person keeps their own voice. */
	line: string;
	/** The line's length in characters (code points), as the bounds count it. */
	chars: number;
}

export interface ContextPart {
	/** Oldest first. */
	entries: ContextEntry[];
	/**
	 * Whether older entries exist that the bounds left out. A yes or no, not a count: counting them would read the
	 * whole Chat on every turn, and a long Chat would make every turn slower (docs/performance.md).
	 */
	olderLeftOut: boolean;
}

export interface ChatContext {
	/** People's messages since the Planner's last finished reply. */
	backscroll: ContextPart;
	/** People's messages and the Planner's finished replies, for a session that starts afresh. */
	transcript: ContextPart;
}

export interface ChatContextOptions {
	/** Only messages before this seq: the turn's own message, which is its prompt, is left out. */
	before?: number;
	/**
	 * A turn in a thread (docs/chat.md, Threads): the backscroll is the thread's, and the transcript is the main
	 * Chat up to the thread's root (with the Planner's reply to it), then the thread. Without it, the main Chat only.
	 */
	thread?: { root: string; rootSeq: number };
}

function entryOf(row: ContextRow): ContextEntry {
	const login = row.role === "planner" ? PLANNER_HANDLE : (row.author_login ?? "unknown");
	const line = `@${login}: ${row.body}`;
	return {
		messageId: row.id,
		seq: row.seq,
		role: row.role === "planner" ? "planner" : "person",
		login,
		text: row.body,
		line,
		chars: codePointLength(line),
	};
}

/**
 * The newest entries, newest first in `rows`, that fit: stops at the first entry over the count or
 * the character budget, so what is kept is always an unbroken run up to the newest. With
 * keepOneWhole, the newest entry is kept even when it alone is over the budget. `rows` holds one
 * more than maxEntries when there are that many, so a row left over means older entries were left out.
 */
function fit(rows: ContextRow[], maxEntries: number, maxChars: number, keepOneWhole: boolean): ContextPart {
	const entries: ContextEntry[] = [];
	let chars = 0;
	for (const row of rows) {
		if (entries.length === maxEntries) break;
		const entry = entryOf(row);
		const fits = chars + entry.chars <= maxChars || (keepOneWhole && entries.length === 0);
		if (!fits) break;
		entries.push(entry);
		chars += entry.chars;
	}
	return { entries: entries.reverse(), olderLeftOut: rows.length > entries.length };
}

/**
 * What an entry needs of a message: a turn reads up to 142 rows here, so neither the other columns nor their JSON
 * are read and checked.
 */
const contextRow = messageRow.pick({ id: true, seq: true, author_login: true, role: true, body: true });
type ContextRow = z.infer<typeof contextRow>;

/**
 * Chat context for a Planner turn (spec: hosted-agent.md, Chat context). The Planner's last turn is
 * its newest reply that finished `done`: replies that failed or still stream are not turns the model
 * finished, and nothing of them is given. System notices are for people and are left out.
 */
export async function chatContext(
	db: Db,
	documentId: string,
	options: ChatContextOptions = {},
): Promise<ChatContext> {
	const before = options.before ?? Number.MAX_SAFE_INTEGER;
	const { thread } = options;
	// Where the backscroll and the Planner's last turn are looked for: the main Chat, or the thread.
	const place = thread ? db.sql`thread_root = ${thread.root}` : db.sql`thread_root IS NULL`;
	// What a new session reads: the main Chat, or the main Chat up to the root, its reply, and the thread.
	const seen = thread
		? db.sql`((thread_root IS NULL AND (seq <= ${thread.rootSeq} OR reply_to = ${thread.root}))
			OR thread_root = ${thread.root})`
		: db.sql`thread_root IS NULL`;
	// The Planner's last finished turn in this place: backscroll is what people said since.
	const since = db.sql`(SELECT coalesce(max(seq), 0) FROM chat_messages WHERE document_id = ${documentId}
		AND ${place} AND role = 'planner' AND status = 'done' AND seq < ${before})`;
	// Each query reads one row more than its bound, which says whether older entries were left out: a turn's reads
	// stay the same size however long the Chat grows (docs/performance.md, the path to a turn).
	const backscrolled = db.sql`document_id = ${documentId} AND ${place} AND role = 'person' AND seq > ${since}
		AND seq < ${before}`;
	const transcribed = db.sql`document_id = ${documentId} AND ${seen} AND seq < ${before}
		AND (role = 'person' OR (role = 'planner' AND status = 'done'))`;
	// Both at once: on PostgreSQL each takes its own pooled connection (a transaction would run them in turn).
	const [backscroll, transcript] = await Promise.all([
		db.many(
			db.sql`SELECT id, seq, author_login, role, body FROM chat_messages WHERE ${backscrolled}
				ORDER BY seq DESC LIMIT ${BACKSCROLL_MAX_ENTRIES + 1}`,
			contextRow,
		),
		db.many(
			db.sql`SELECT id, seq, author_login, role, body FROM chat_messages WHERE ${transcribed}
				ORDER BY seq DESC LIMIT ${TRANSCRIPT_MAX_ENTRIES + 1}`,
			contextRow,
		),
	]);
	return {
		backscroll: fit(backscroll, BACKSCROLL_MAX_ENTRIES, BACKSCROLL_MAX_CHARS, true),
		transcript: fit(transcript, TRANSCRIPT_MAX_ENTRIES, TRANSCRIPT_MAX_CHARS, false),
	};
}
