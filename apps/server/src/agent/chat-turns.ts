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

/** Streams a turn into a Planner reply: text deltas, Work details rows, and its end. */
export class ChatReplySink implements TurnSink {
	#lastTextId: string | undefined;
	#lastChar = "";
	#ended = false;
	/** Text received and not yet appended (see text()). */
	#pending = "";
	#scheduled = false;
	/** Settles once the reply's end is stored. */
	finished: Promise<unknown> = Promise.resolve();
	/** How the turn ended, once it has. */
	outcome: TurnOutcome | undefined;

	constructor(
		private readonly replies: ReplyService,
		readonly replyId: string,
		private readonly log: Logger,
	) {}

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
		this.replies.appendDelta(this.replyId, text).catch((error: unknown) => this.#failed("delta", error));
	}

	toolStarted(call: ToolStarted): void {
		if (this.#ended) return;
		this.#flushText();
		this.replies.startTool(this.replyId, call).catch((error: unknown) => this.#failed("tool row", error));
	}

	toolFinished(result: ToolFinished): void {
		if (this.#ended) return;
		this.#flushText();
		this.replies
			.finishTool(this.replyId, result)
			.catch((error: unknown) => this.#failed("tool result", error));
	}

	/** Never rejects: the image is stored already, so a message that cannot show it does not fail the call. */
	async image(image: StoredImage, alt: string): Promise<void> {
		if (this.#ended) return;
		this.#flushText();
		await this.replies
			.attachImage(this.replyId, image, alt)
			.catch((error: unknown) => this.#failed("image", error));
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
		this.finished = this.replies
			.finish(this.replyId, finish)
			.catch((error: unknown) => this.#failed("finish", error));
	}

	#failed(what: string, error: unknown): void {
		this.log.warn(`chat reply ${what} not stored`, { error, message: this.replyId });
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
	/** It runs message again after its earlier reply failed (Retry). */
	retry?: boolean;
	/** The thread's root when the message is in a thread: the reply goes there, the session forks (session-forks). */
	thread?: MessageView;
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
 * Runs a turn that answers a Chat message, on the attached Planner the caller reserved (busy). The
 * reply exists at once, so the page shows chopin answering; every failure before or during the turn
 * ends it failed with a line saying why. Resolves once the reply's end is stored.
 */
export async function runChatTurn(planner: AttachedPlanner, chatTurn: ChatTurn): Promise<ChatTurnEnd> {
	const { domain, log } = planner.deps;
	const documentId = planner.document.id;
	let sink: ChatReplySink | undefined;
	try {
		// Access is checked before the session starts and again before its turn. The reply is written while the
		// client starts the session, so the turn frame waits for the longer of the two rather than both.
		const before = await planner.guard();
		const opening = before.ok ? openTurnSession(planner, chatTurn) : undefined;
		// Settled here too: a start that fails while the reply is written is not an unhandled rejection.
		opening?.catch(() => {});
		let reply: MessageView;
		try {
			reply = await domain.chat.replies.start(documentId, {
				replyTo: chatTurn.replyTo,
				...(chatTurn.thread && { threadRoot: chatTurn.thread.id }),
			});
		} catch (error) {
			// No reply to run the turn in: the session started for it ends.
			void opening?.then(({ session }) => planner.release(session)).catch(() => {});
			throw error;
		}
		const replies = new ChatReplySink(domain.chat.replies, reply.id, log);
		sink = replies;
		const ended = async (): Promise<ChatTurnEnd> => {
			await replies.finished;
			return {
				replyId: reply.id,
				outcome: replies.outcome ?? { status: "failed", message: wording.turnFailed() },
			};
		};
		const failed = (text: string) => {
			replies.ended({ status: "failed", message: text });
			return ended();
		};
		if (!before.ok) return await failed(before.message);
		let opened: TurnSession;
		try {
			opened = await opening!;
		} catch (error) {
			if (error instanceof StartFailed) return await failed(error.message);
			throw error;
		}
		const { session } = opened;
		planner.claim(session);
		try {
			const again = await planner.guard();
			if (!again.ok) return await failed(again.message);
			// A person's model and level, checked against the catalog as the turn starts (capability-catalog).
			const choice = await planner.composer?.forTurn(documentId);
			// The person's files, read again for every turn of the message (a Retry sends the same ones).
			const attachments = chatTurn.message ? await domain.chat.attachments(chatTurn.message) : [];
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
		return await ended();
	} catch (error) {
		log.error("chat turn failed", { error, document: documentId });
		return {
			...(sink && { replyId: sink.replyId }),
			outcome: { status: "failed", message: wording.turnFailed() },
		};
	} finally {
		planner.idle();
	}
}
