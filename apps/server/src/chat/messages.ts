// A document's Chat: people's messages, system notices, the Planner's streaming replies, paged history,
// @chopin mentions, and the bounded context a Planner turn is given (see docs/chat.md).
import { codePointLength } from "@chopin/agent-link";
import type { DomainDeps } from "../domain-deps";
import { randomId } from "../ids";
import type { DocumentImageService } from "../images/service";
import { readAttachment, readAttachments, type StoredAttachment } from "./attachment-rows";
import {
	type AttachmentCaps,
	checkAttachments,
	type NewAttachment,
	SPEC_ATTACHMENT_CAPS,
} from "./attachments";
import { type ChatContext, type ChatContextOptions, chatContext } from "./context";
import { ChatError } from "./errors";
import { mentionsPlanner } from "./mentions";

export { mentionsPlanner };

import {
	findMessageRow,
	insertMessage,
	messageRow,
	messageViews,
	type NewMessage,
	newMessageView,
} from "./message-rows";
import type { MessageView } from "./message-view";
import { ReplyService } from "./replies";
import { publishThreadRoot, threadRootRow } from "./threads";

/** A person's message is at most this many characters (code points): a long paste, not a document. */
export const MAX_MESSAGE_CHARS = 20_000;
/** A system notice is one note. */
export const MAX_NOTICE_CHARS = 4000;
/** A page of history holds this many messages unless asked for fewer, and at most MAX_PAGE. */
export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 200;

/** GitHub's login rules (local accounts follow them too). */
const LOGIN_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;

export interface PostedMessage {
	message: MessageView;
	/** Whether it asks the Planner (an @chopin mention outside code): the caller starts a turn. */
	mentionsPlanner: boolean;
}

export interface MessagePage {
	/** Oldest first. */
	messages: MessageView[];
	/** Whether older messages remain: ask again with `before` set to the first message's seq. */
	more: boolean;
}

export class ChatService {
	/** The Planner's replies as they stream. */
	readonly replies: ReplyService;

	constructor(
		private readonly deps: DomainDeps,
		images: DocumentImageService,
		/** CHAT_ATTACHMENT_MAX_BYTES and CHAT_ATTACHMENT_MAX_TOTAL_BYTES; the spec's by default. */
		private readonly attachmentCaps: AttachmentCaps = SPEC_ATTACHMENT_CAPS,
	) {
		this.replies = new ReplyService(deps, images);
	}

	/**
	 * Appends a person's message (1 to 20,000 characters, not blank) with the files they sent (checked whole
	 * first: a wrong file refuses the message) and says whether it mentions @chopin. With durable: false it is
	 * committed without waiting for the disk, and the caller must await store.synced() before it tells the sender
	 * the message was sent: the Planner's turn can leave meanwhile.
	 */
	async post(
		documentId: string,
		input: { author: string; body: string; attachments?: readonly NewAttachment[]; threadRoot?: string },
		options: { durable?: boolean } = {},
	): Promise<PostedMessage> {
		if (!LOGIN_PATTERN.test(input.author)) {
			throw new ChatError("invalid-login", `${JSON.stringify(input.author.slice(0, 60))} is not a login.`);
		}
		const body = checkBody(input.body, MAX_MESSAGE_CHARS);
		const attachments = this.checkAttachments(input.attachments ?? []);
		if (input.threadRoot !== undefined) await this.threadRoot(documentId, input.threadRoot);
		const message = await this.#insert(documentId, {
			role: "person",
			authorLogin: input.author,
			body,
			...(attachments.length > 0 && { attachments }),
			...(input.threadRoot !== undefined && { threadRoot: input.threadRoot }),
			...(options.durable === false && { durable: false }),
		});
		return { message, mentionsPlanner: mentionsPlanner(body) };
	}

	/** A thread's root, checked (in this document, top-level, not a notice); a ChatError otherwise. */
	async threadRoot(documentId: string, rootId: string): Promise<MessageView> {
		const row = await threadRootRow(this.deps.store, documentId, rootId);
		return (await messageViews(this.deps.store, [row]))[0]!;
	}

	/** Appends a notice from Chopin itself (a Planner disconnected, a Stop not confirmed, ...); archived documents take them too. */
	async postNotice(documentId: string, body: string): Promise<MessageView> {
		return this.#insert(documentId, {
			role: "system",
			authorLogin: null,
			body: checkBody(body, MAX_NOTICE_CHARS),
		});
	}

	/** Checks files before anything is posted (kinds from the bytes, names, this deployment's caps). */
	checkAttachments(files: readonly NewAttachment[]) {
		return checkAttachments(files, this.attachmentCaps);
	}

	/** The files a message carries, with their bytes, in the order sent: for the turn that answers it. */
	attachments(messageId: string): Promise<StoredAttachment[]> {
		return readAttachments(this.deps.store, messageId);
	}

	/** One of a message's files, when the message is in this document; a ChatError otherwise. */
	async attachment(documentId: string, messageId: string, index: number): Promise<StoredAttachment> {
		const row = await findMessageRow(this.deps.store, messageId);
		const file =
			row?.document_id === documentId ? await readAttachment(this.deps.store, messageId, index) : undefined;
		if (!file) {
			throw new ChatError(
				"attachment-not-found",
				`Message ${messageId} has no file ${index}.`,
				undefined,
				404,
			);
		}
		return file;
	}

	async get(messageId: string): Promise<MessageView> {
		const row = await findMessageRow(this.deps.store, messageId);
		if (!row) throw new ChatError("message-not-found", `No message ${messageId} exists.`, undefined, 404);
		return this.#live((await messageViews(this.deps.store, [row]))[0]!);
	}

	/**
	 * The latest `limit` messages (default 50, at most 200) before seq `before` (default: the newest),
	 * oldest first: of the main Chat, or with `thread` of that message's thread. A reply this process is streaming shows every delta published so far.
	 */
	async list(
		documentId: string,
		options: { before?: number; limit?: number; thread?: string } = {},
	): Promise<MessagePage> {
		const limit = options.limit ?? DEFAULT_PAGE;
		if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
			throw new ChatError("invalid-page", `limit must be a whole number from 1 to ${MAX_PAGE}.`);
		}
		const before = options.before ?? Number.MAX_SAFE_INTEGER;
		if (!Number.isSafeInteger(before) || before < 1) {
			throw new ChatError("invalid-page", "before must be a message's seq, a whole number from 1.");
		}
		const { store } = this.deps;
		// The main Chat, or one thread's messages (its root is on the main Chat's pages).
		if (options.thread !== undefined) await threadRootRow(store, documentId, options.thread);
		const rows = await store.many(
			options.thread === undefined
				? store.sql`SELECT * FROM chat_messages WHERE document_id = ${documentId} AND thread_root IS NULL
					AND seq < ${before} ORDER BY seq DESC LIMIT ${limit + 1}`
				: store.sql`SELECT * FROM chat_messages WHERE document_id = ${documentId}
					AND thread_root = ${options.thread} AND seq < ${before} ORDER BY seq DESC LIMIT ${limit + 1}`,
			messageRow,
		);
		const page = rows.slice(0, limit).reverse();
		const views = await messageViews(store, page);
		return { messages: views.map((v) => this.#live(v)), more: rows.length > limit };
	}

	/** What a Planner turn is given of this Chat: the backscroll since its last turn and the bootstrap transcript. */
	chatContext(documentId: string, options?: ChatContextOptions): Promise<ChatContext> {
		return chatContext(this.deps.store, documentId, options);
	}

	async #insert(
		documentId: string,
		fields: {
			role: "person" | "system";
			authorLogin: string | null;
			body: string;
			attachments?: NewMessage["attachments"];
			threadRoot?: string;
			durable?: boolean;
		},
	): Promise<MessageView> {
		const row = await insertMessage(this.deps.store, {
			id: randomId(),
			documentId,
			...fields,
			status: "done",
			replyTo: null,
			now: this.deps.clock.now(),
		});
		const message = fields.attachments?.length
			? (await messageViews(this.deps.store, [row]))[0]!
			: newMessageView(row);
		this.deps.hub.publish(documentId, { type: "message.created", documentId, message });
		if (fields.threadRoot !== undefined) await publishThreadRoot(this.deps, fields.threadRoot);
		return message;
	}

	#live(view: MessageView): MessageView {
		const body = view.status === "streaming" ? this.replies.liveBody(view.id) : undefined;
		return body === undefined ? view : { ...view, body };
	}
}

function checkBody(body: string, max: number): string {
	if (!body.trim()) throw new ChatError("message-empty", "The message is empty.");
	if (codePointLength(body, max) > max) {
		throw new ChatError(
			"message-too-long",
			`The message is longer than ${max} characters.`,
			"Shorten it, or put the long text in a document and refer to it.",
		);
	}
	return body;
}
