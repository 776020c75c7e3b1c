// A person's @chopin message as a turn of the attached Planner: a fresh planner session per message (kept after
// its turn only while it holds runs or questions), the prompt `@login: text`, instructions with the bounded
// transcript, and the reply streamed live into Chat. An interrupted turn is never replayed.

import type { MessageView } from "../chat/message-view";
import type { ReplyService } from "../chat/replies";
import type { StoredImage } from "../images/service";
import type { Logger } from "../log";
import type { AttachedPlanner } from "./attached";
import { recordForkPoint } from "./fork-points";
import { StartFailed } from "./sessions";
import { openTurnSession, type TurnSession } from "./turn-session";
import type { ToolFinished, ToolStarted, TurnOutcome, TurnSink } from "./turns";
import { wording } from "./wording";

/**
 * Streams a turn into a Planner reply: text deltas, Work details rows, and its end. The reply row may still be
 * being written when the turn starts streaming (it is written after the turn frame leaves): every write waits
 * for it, in the order made.
 */
export class ChatReplySink implements TurnSink {
	#lastTextId: string | undefined;
	#lastChar = "";
	#ended = false;
	/** Text received and not yet appended (see text()). */
	#pending = "";
	#scheduled = false;
	/** The reply's id once its row is written; undefined when it could not be. */
	readonly #id: Promise<string | undefined>;
	/** Settles once the reply's end is stored. */
	finished: Promise<unknown> = Promise.resolve();
	/** How the turn ended, once it has. */
	outcome: TurnOutcome | undefined;

	constructor(
		private readonly replies: ReplyService,
		reply: Promise<MessageView>,
		private readonly log: Logger,
	) {
		this.#id = reply.then(
			(view) => view.id,
			(error: unknown) => {
				this.log.error("chat reply not started", { error });
				return undefined;
			},
		);
	}

	/** The reply's id, once its row is written (undefined when it could not be). */
	replyId(): Promise<string | undefined> {
		return this.#id;
	}

	/** Resolves true when the reply's row could not be written: the turn has nowhere to go. */
	get lost(): Promise<boolean> {
		return this.#id.then((id) => id === undefined);
	}

	text(delta: string, partId: string): void {
		if (this.#ended || delta === "") return;
		// Separate text blocks (a new part id, as after a tool call) read as separate paragraphs.
		const gap = this.#lastTextId !== undefined && partId !== this.#lastTextId && this.#lastChar !== "\n";
		this.#lastTextId = partId;
		const text = gap ? `\n\n${delta}` : delta;
		this.#lastChar = text.at(-1) ?? this.#lastChar;
		// Deltas read from the socket in one go are appended together, once the read is over: one live
		// event and one store write for the batch instead of one each, however fast the client streams.
		this.#pending += text;
		if (!this.#scheduled) {
			this.#scheduled = true;
			setImmediate(() => this.#flushText());
		}
	}

	#flushText(): void {
		this.#scheduled = false;
		const text = this.#pending;
		this.#pending = "";
		if (text === "") return;
		void this.#write("delta", (id) => this.replies.appendDelta(id, text));
	}

	toolStarted(call: ToolStarted): void {
		if (this.#ended) return;
		this.#flushText();
		void this.#write("tool row", (id) => this.replies.startTool(id, call));
	}

	toolFinished(result: ToolFinished): void {
		if (this.#ended) return;
		this.#flushText();
		void this.#write("tool result", (id) => this.replies.finishTool(id, result));
	}

	/** Never rejects: the image is stored already, so a message that cannot show it does not fail the call. */
	async image(image: StoredImage, alt: string): Promise<void> {
		if (this.#ended) return;
		this.#flushText();
		await this.#write("image", (id) => this.replies.attachImage(id, image, alt));
	}

	ended(outcome: TurnOutcome): void {
		if (this.#ended) return;
		this.#flushText();
		this.#ended = true;
		this.outcome = outcome;
		const finish =
			outcome.status === "finished"
				? ({ status: "done" } as const)
				: ({
						status: "failed",
						error:
							outcome.message ??
							(outcome.status === "aborted" ? wording.turnAborted() : wording.turnFailed()),
					} as const);
		this.finished = this.#write("finish", (id) => this.replies.finish(id, finish));
	}

	/** A store write once the reply's row exists (none when it could not be written); a failure is logged. */
	#write(what: string, write: (id: string) => Promise<unknown>): Promise<void> {
		return this.#id.then(async (id) => {
			if (id === undefined) return;
			await write(id).catch((error: unknown) => {
				this.log.warn(`chat reply ${what} not stored`, { error, message: id });
			});
		});
	}
}

/** A turn that answers a Chat message: the reply is a reply to it, the transcript ends before it. */
export interface ChatTurn {
	/** The message the reply answers (a person's message, or a notice of who asked). */
	replyTo: string;
	/** Its seq: the transcript the turn is given holds what came before it. */
	before: number;
	prompt: string;
	/** The person's message that began the turn (turn.message with retry-turn); absent for a notice. */
	message?: string;
	/** The message carries files: they are read for the turn (none is looked for otherwise). */
	files?: true;
	/** It runs message again after its earlier reply failed (Retry). */
	retry?: boolean;
	/** The thread's root when the message is in a thread: the reply goes there, the session forks (session-forks). */
	thread?: MessageView;
	/** Called once the turn frame has left, or the turn ended without one (at most once). */
	left?: () => void;
}

/** The turn a person's message begins (or runs again, with retry): its reply answers it, in its thread if any. */
export function messageTurn(
	message: MessageView,
	options: { retry?: boolean; thread?: MessageView | undefined } = {},
): ChatTurn {
	return {
		replyTo: message.id,
		before: message.seq,
		prompt: `@${message.authorLogin}: ${message.body}`,
		message: message.id,
		...(message.attachments?.length ? { files: true as const } : {}),
		...(options.retry && { retry: true }),
		...(options.thread && { thread: options.thread }),
	};
}

/** How a Chat turn ended: its reply's id once it had one, and the turn's outcome (failed when it never ran). */
export interface ChatTurnEnd {
	replyId?: string;
	outcome: TurnOutcome;
}

/**
 * Runs a turn that answers a Chat message, on the attached Planner the caller reserved (busy). The reply row is
 * written as the turn frame leaves (after it, so the turn does not wait for the write), and the page then shows
 * chopin answering; every failure before or during the turn ends it failed with a line saying why. Resolves once
 * the reply's end is stored.
 */
export async function runChatTurn(planner: AttachedPlanner, chatTurn: ChatTurn): Promise<ChatTurnEnd> {
	const { domain, log } = planner.deps;
	const documentId = planner.document.id;
	let sink: ChatReplySink | undefined;
	/** Writes the reply's row (streaming): for the turn, once its frame has left; else for the failure it shows. */
	const startReply = () =>
		domain.chat.replies.start(documentId, {
			replyTo: chatTurn.replyTo,
			...(chatTurn.thread && { threadRoot: chatTurn.thread.id }),
		});
	const ended = async (replies: ChatReplySink): Promise<ChatTurnEnd> => {
		await replies.finished;
		const replyId = await replies.replyId();
		return {
			...(replyId !== undefined && { replyId }),
			outcome: replies.outcome ?? { status: "failed", message: wording.turnFailed() },
		};
	};
	const failed = (text: string) => {
		sink ??= new ChatReplySink(domain.chat.replies, startReply(), log);
		sink.ended({ status: "failed", message: text });
		return ended(sink);
	};
	try {
		// Access is checked before the session starts and again before its turn.
		const before = await planner.guard();
		if (!before.ok) return await failed(before.message);
		const opening = openTurnSession(planner, chatTurn);
		// Read while the client starts the session (the turn waits for the longest, not their sum): a person's model
		// and level (capability-catalog), and the person's files, read again for every turn of the message (a Retry
		// sends the same ones).
		const choosing = planner.composer?.forTurn(documentId);
		const reading =
			chatTurn.message && chatTurn.files ? domain.chat.attachments(chatTurn.message) : undefined;
		// Settled here too: a read that fails while the session starts is not an unhandled rejection.
		for (const pending of [opening, choosing, reading]) pending?.catch(() => {});
		let opened: TurnSession;
		try {
			opened = await opening;
		} catch (error) {
			if (error instanceof StartFailed) return await failed(error.message);
			throw error;
		}
		const { session } = opened;
		planner.claim(session);
		try {
			const again = await planner.guard();
			if (!again.ok) return await failed(again.message);
			const choice = await choosing;
			const attachments = (await reading) ?? [];
			// The sink exists before the frame leaves (the client may answer at once); the row is written after it.
			const row = Promise.withResolvers<MessageView>();
			const replies = new ChatReplySink(domain.chat.replies, row.promise, log);
			sink = replies;
			const turn = planner.runTurn(
				session,
				{
					prompt: chatTurn.prompt,
					instructions: opened.instructions,
					...(chatTurn.message !== undefined && { message: chatTurn.message }),
					...(chatTurn.retry && { retry: true }),
					...(choice && { choice: { model: choice.model, thinkingLevel: choice.thinkingLevel } }),
					...(attachments.length > 0 && { attachments }),
				},
				replies,
			);
			chatTurn.left?.();
			// On the next turn of the event loop: a frame sent while a client's frame (`started`) is handled leaves when
			// that handling and its microtasks are done, so the row's write (synchronous on SQLite) would hold it back.
			setImmediate(() => startReply().then(row.resolve, row.reject));
			// A reply that cannot be written (the document archived meanwhile, the store failing): the turn stops.
			void replies.lost.then((lost) => lost && turn.running && turn.abort());
			// A person's @chopin message while it runs is steered into it (steer-turn).
			if (turn.running) planner.chatTurn = { turn, thread: chatTurn.thread?.id };
			const outcome = await turn.done;
			// What a thread on this message (or a later message of its thread) forks from (session-forks).
			if (outcome.status === "finished" && chatTurn.message) {
				await recordForkPoint(
					planner.deps.store,
					chatTurn.message,
					{ session: session.id, turn: turn.id },
					planner.deps.clock.now(),
				).catch((error: unknown) => log.error("fork point not recorded", { error, document: documentId }));
			}
		} finally {
			planner.chatTurn = undefined;
			planner.release(session);
		}
		return await ended(sink!);
	} catch (error) {
		log.error("chat turn failed", { error, document: documentId });
		// The reply says so, written now if the turn never had one.
		return await failed(wording.turnFailed());
	} finally {
		chatTurn.left?.();
		planner.idle();
	}
}
