// A person's Chat message to the Planner service (the Chat API's handleMessage): posted as it is without an @chopin
// mention; a command checked against the client's catalog; with steer-turn, an @chopin message while the Planner
// works handed to its running turn; otherwise a new turn on the reserved Planner, or the spec's refusal.

import { attachmentsRefused } from "../chat/attachments";
import { ChatError } from "../chat/errors";
import { mentionsPlanner } from "../chat/mentions";
import type { MessageView } from "../chat/message-view";
import { accessDeps, actingAuthorization } from "./access";
import type { AttachedPlanner } from "./attached";
import { messageTurn, runChatTurn } from "./chat-turns";
import { runCommandMessage } from "./commands";
import type { ChatMessageInput, PlannerMessageResult } from "./planner-service";
import { type ReserveDeps, reservePlanner } from "./reserve";
import { wording } from "./wording";

/** The longest the flush of an @chopin message waits for its turn to leave before it starts anyway. */
export const FLUSH_WAITS_FOR_TURN_MS = 20;

export async function handleChatMessage(
	r: ReserveDeps,
	input: ChatMessageInput,
): Promise<PlannerMessageResult> {
	const { chat } = r.deps.domain;
	const files = input.attachments ?? [];
	// Wrong files are refused before anything else is decided (the Planner is not reserved for them).
	chat.checkAttachments(files);
	// A thread's root is checked before anything else too: a message is never posted to a thread that cannot be.
	const thread =
		input.thread === undefined ? undefined : await chat.threadRoot(input.documentId, input.thread);
	if (input.command) {
		if (files.length > 0) throw attachmentsRefused(wording.attachmentsWithCommand());
		if (thread) throw threadCommandRefused();
		return runCommandMessage(r, { ...input, command: input.command });
	}
	if (!mentionsPlanner(input.body)) {
		const posted = await chat.post(input.documentId, {
			author: input.author,
			body: input.body,
			attachments: files,
			...(thread && { threadRoot: thread.id }),
		});
		return { status: "sent", message: posted.message, turn: false };
	}
	const working = r.attached(input.documentId);
	// A stale link (its owner's sign-in ended unnoticed) is not steered: reservePlanner closes it and refuses.
	// Only a message of the running turn's own thread (or of the main Chat, for a main turn) is steered into it;
	// any other is refused as busy.
	if (
		working?.busy &&
		working.chatTurn?.thread === thread?.id &&
		working.link.features.has("steer-turn") &&
		actingAuthorization(accessDeps(r.deps), working.owner)
	) {
		// A steer hands on words only: files would be lost, so the message is refused whole.
		if (files.length > 0)
			return { status: "refused", code: "planner-busy", message: wording.steerAttachments() };
		return steer(r, working, input);
	}
	const reserved = await reservePlanner(r, input.documentId, input.author);
	if (!reserved.ok) return reserved.refusal as PlannerMessageResult;
	const { planner } = reserved;
	let message: MessageView;
	try {
		message = (
			await chat.post(
				input.documentId,
				{
					author: input.author,
					body: input.body,
					attachments: files,
					...(thread && { threadRoot: thread.id }),
				},
				{ durable: false },
			)
		).message;
	} catch (error) {
		planner.idle();
		throw error;
	}
	// The turn reads the message's files from the store, as a Retry of it does. It leaves as soon as the message
	// is committed; the sender is told "sent" once the message is on disk too (onDisk; docs/server.md, durable
	// commits).
	const left = Promise.withResolvers<void>();
	void runChatTurn(planner, { ...messageTurn(message, { thread }), left: left.resolve });
	const onDisk = flushOnceLeft(r, left);
	// Awaited by the Chat API; a caller that does not wait for it does not leave a failed flush unhandled.
	onDisk.catch(() => {});
	return { status: "sent", message, turn: true, onDisk };
}

/**
 * The message's flush (store.synced()), started once its turn frame has left, or after FLUSH_WAITS_FOR_TURN_MS at
 * most. Run beside the session's start, the flush and the answer to the sender slowed the turn a person waits on
 * (docs/performance.md, Message to turn frame). The page shows the message from its own event; only its composer
 * waits for the answer, to clear the text.
 */
async function flushOnceLeft(r: ReserveDeps, left: PromiseWithResolvers<void>): Promise<void> {
	// The bound settles the same promise the turn does: whichever comes first starts the flush.
	const bound = r.deps.clock.setTimeout(left.resolve, FLUSH_WAITS_FOR_TURN_MS);
	await left.promise;
	bound.cancel();
	await r.deps.store.synced();
}

/**
 * steer-turn: an @chopin message while the Planner works is posted and handed to its running turn, never
 * kept for a later one. With no turn running yet (its session is starting) or one stopping, it is refused.
 */
async function steer(
	r: ReserveDeps,
	planner: AttachedPlanner,
	input: { documentId: string; author: string; body: string; thread?: string },
): Promise<PlannerMessageResult> {
	const turn = planner.chatTurn?.turn;
	if (!turn?.running) return { status: "refused", code: "planner-busy", message: wording.steerNoTurn() };
	const { chat } = r.deps.domain;
	const { message } = await chat.post(input.documentId, {
		author: input.author,
		body: input.body,
		...(input.thread !== undefined && { threadRoot: input.thread }),
	});
	if (turn.running) planner.steers.send(turn, input.author, `@${input.author}: ${message.body}`);
	else {
		await chat.postNotice(input.documentId, wording.steerEnded(input.author)).catch((error: unknown) => {
			r.deps.log.error("steer notice not posted", { error });
		});
	}
	return { status: "sent", message, turn: false, steered: true };
}

function threadCommandRefused(): ChatError {
	return new ChatError(
		"command-in-thread",
		"A command runs on the main Chat, not in a thread.",
		"Send the command from the main Chat's composer.",
		409,
	);
}
