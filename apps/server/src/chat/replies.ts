// A Planner reply as it streams: created streaming, text appended delta by delta, Work details rows and the
// images a turn made, then finished done or failed. Every change to one reply runs in order.
import { cutToCodePoints } from "@chopin/agent-link";
import type { SQL } from "bun";
import { z } from "zod";
import type { DomainDeps } from "../domain-deps";
import { randomId } from "../ids";
import type { DocumentImageService, StoredImage } from "../images/service";
import type { Db } from "../store/store";
import { type BodyWrite, BodyWrites } from "./body-writes";
import { ChatError } from "./errors";
import { maskCredentials } from "./masking";
import {
	findMessageRow,
	insertMessage,
	type MessageRow,
	messageRow,
	messageViews,
	newMessageView,
} from "./message-rows";
import type { ChatImage, MessageView } from "./message-view";
import { publishThreadRoot } from "./threads";
import { storeToolImages } from "./tool-image-store";
import type { ResultState } from "./tool-results";
import { shownToolInput, shownToolResult } from "./work-details";

/** The error of a reply a killed or crashed process left streaming. */
export const INTERRUPTED = "Chopin restarted before this reply finished.";

/** A failure line is one note: at most 4000 characters, masked. */
export const MAX_ERROR_CHARS = 4000;

/** Stops the calls still running on the replies `which` picks: a reply that ends leaves none running. */
function stopRunningCalls(db: Db, which: SQL.Query<unknown>, now: number) {
	return db.sql`UPDATE chat_tool_calls SET status = 'failed', error_label = 'Stopped',
		error_message = 'The turn ended before this call finished.', ended_at = ${now}
		WHERE ${which} AND status = 'running'`;
}

/**
 * A streaming reply's text is written at most once a real second, and less often as the body
 * grows (1 ms per 50 characters: each write copies the whole body, so this bounds what a long reply
 * costs to about 50,000 characters a second). Only a crash of the machine loses what was not
 * written yet, and the reply fails on restart then anyway. Bun's SQLite writes complete within the same tick, so
 * "deltas that arrive during a write join the next one" alone batches nothing, and each `body || ?`
 * rewrites the whole body: a fast stream would cost one full-row write per delta, and a long one
 * would stall the event loop on every write. Readers see the streamed text from memory meanwhile
 * (liveBody), and finish writes what is left at once. The writes of every reply streaming at
 * once share slots on one grid of this step (body-writes.ts): one transaction per slot, not one per
 * reply. This paces writes; it is not business time, so it does not use the injected clock.
 */
export const BODY_WRITE_EVERY_MS = 1000;
const BODY_CHARS_PER_MS = 50;

/** What this process holds of a reply it streams. */
interface Stream {
	documentId: string;
	/** The whole body so far, flushed or not: views of the reply read it, so they never lag the deltas. */
	body: string;
	/** Text not yet handed to a write. */
	pending: string;
	/** The write that will take `pending`, when one is queued and has not started. */
	flush?: Promise<void>;
	/** Set once finish is called: no more deltas. */
	closed: boolean;
	/** When the body was last written (performance.now()). */
	lastWrite: number;
	/** Ends the wait before a paced write at once (finish does not wait for it). */
	wake?: () => void;
}

export type ReplyOutcome = { status: "done" } | { status: "failed"; error: string };

export interface ToolCallStart {
	toolCallId: string;
	name: string;
	/** The call's arguments: the JSON string sent on the wire, or a value. */
	input: unknown;
}

export interface ToolCallResult extends ResultState {
	toolCallId: string;
	/** The tool's name, for a result whose call was never started (its row is made then). */
	name?: string;
	result: unknown;
}

export class ReplyService {
	readonly #streams = new Map<string, Stream>();
	readonly #queues = new Map<string, Promise<void>>();
	readonly #bodyWrites: BodyWrites;

	constructor(
		private readonly deps: DomainDeps,
		private readonly images: DocumentImageService,
	) {
		this.#bodyWrites = new BodyWrites(deps.store, () => deps.clock.now(), BODY_WRITE_EVERY_MS);
	}

	/** The reply's part of a body write: the text pending when its slot is written. */
	#bodyWrite(messageId: string, stream: Stream): BodyWrite {
		return {
			messageId,
			take: () => {
				stream.flush = undefined;
				const text = stream.pending;
				stream.pending = "";
				return text;
			},
		};
	}

	/** Creates the Planner's reply in `streaming` status, answering replyTo when a person's message began the turn. */
	async start(
		documentId: string,
		options: { replyTo?: string; threadRoot?: string } = {},
	): Promise<MessageView> {
		const row = await insertMessage(this.deps.store, {
			id: randomId(),
			documentId,
			role: "planner",
			authorLogin: null,
			body: "",
			status: "streaming",
			replyTo: options.replyTo ?? null,
			threadRoot: options.threadRoot ?? null,
			now: this.deps.clock.now(),
			// Not waited on the disk: a reply still streaming when the machine stops fails on restart anyway, and
			// its finish commits durably. This commit is on the path to the turn (docs/server.md, durable commits).
			durable: false,
		});
		this.#streams.set(row.id, { documentId, body: "", pending: "", closed: false, lastWrite: 0 });
		const view = newMessageView(row);
		this.deps.hub.publish(documentId, { type: "message.created", documentId, message: view });
		if (row.thread_root !== null) await publishThreadRoot(this.deps, row.thread_root);
		return view;
	}

	/** Whether this process streams the message (only the process that started a reply can append to it). */
	isStreaming(messageId: string): boolean {
		const stream = this.#streams.get(messageId);
		return stream !== undefined && !stream.closed;
	}

	/** The body as streamed so far, ahead of what is stored; undefined for a message this process does not stream. */
	liveBody(messageId: string): string | undefined {
		return this.#streams.get(messageId)?.body;
	}

	/**
	 * Appends text. The delta event goes out at once; the store is written by one write per batch:
	 * deltas that arrive while a write is under way join the next one, so a fast stream costs few
	 * writes. Resolves once this delta is stored; rejects when the reply is not streaming here or the
	 * write fails, so a caller that does not await it must still catch it.
	 */
	appendDelta(messageId: string, delta: string): Promise<void> {
		const stream = this.#streams.get(messageId);
		if (!stream || stream.closed) return Promise.reject(notStreaming(messageId));
		if (delta === "") return Promise.resolve();
		const offset = stream.body.length;
		stream.body += delta;
		stream.pending += delta;
		this.deps.hub.publish(stream.documentId, {
			type: "message.delta",
			documentId: stream.documentId,
			messageId,
			offset,
			delta,
		});
		stream.flush ??= this.#serial(messageId, async () => {
			if (stream.closed) {
				// Finishing: what is left is written at once (with the slot it joins).
				const now = this.#bodyWrites.schedule(0, this.#bodyWrite(messageId, stream));
				now.hurry();
				await now.written;
				return;
			}
			const { written, hurry } = this.#bodyWrites.schedule(
				paceDue(stream),
				this.#bodyWrite(messageId, stream),
			);
			stream.wake = hurry;
			stream.lastWrite = await written;
			stream.wake = undefined;
		});
		return stream.flush;
	}

	/** Adds a Work details row for a call the turn started. */
	async startTool(messageId: string, call: ToolCallStart): Promise<MessageView> {
		const stream = this.#open(messageId);
		return this.#serial(messageId, async () => {
			const { store } = this.deps;
			const existing = await store.one(
				store.sql`SELECT 1 AS ok FROM chat_tool_calls WHERE message_id = ${messageId} AND tool_call_id = ${call.toolCallId}`,
			);
			if (existing) {
				throw new ChatError(
					"tool-call-repeated",
					`The turn already has a call ${call.toolCallId}.`,
					"Use a new toolCallId for every call.",
					409,
				);
			}
			await this.#insertTool(messageId, call.toolCallId, call.name, shownToolInput(call.input));
			return this.#changed(messageId, stream);
		});
	}

	/**
	 * Records a call's result: its row shows the masked text or structured error, and a final
	 * successful result's images are stored as the document's own images and put on this message
	 * (after any it already has), with a reason for each one Chat will not show.
	 */
	async finishTool(messageId: string, outcome: ToolCallResult): Promise<MessageView> {
		const stream = this.#open(messageId);
		return this.#serial(messageId, async () => {
			const { store, clock } = this.deps;
			const row = await store.one(
				store.sql`SELECT 1 AS ok FROM chat_tool_calls WHERE message_id = ${messageId} AND tool_call_id = ${outcome.toolCallId}`,
			);
			if (!row) await this.#insertTool(messageId, outcome.toolCallId, outcome.name ?? "tool", "");
			const shown = shownToolResult(outcome.result, outcome);
			const ended = shown.status === "running" ? null : clock.now();
			await store.sql`UPDATE chat_tool_calls SET status = ${shown.status}, result = ${shown.result ?? null},
				error_label = ${shown.error?.label ?? null}, error_message = ${shown.error?.message ?? null},
				image_count = ${shown.imageCount}, ended_at = ${ended}
				WHERE message_id = ${messageId} AND tool_call_id = ${outcome.toolCallId}`;
			if (shown.images) {
				const message = (await findMessageRow(store, messageId))!;
				const { stored, refused } = await storeToolImages(shown.images, {
					imagesOnMessage: message.images.length,
					store: async ({ alt, caption, ...fitted }) =>
						chatImage(await this.images.storeFitted(stream.documentId, fitted), alt, caption),
				});
				await this.#addImages(messageId, stored, refused);
			}
			return this.#changed(messageId, stream);
		});
	}

	/** Shows an image the turn stored (upload_plan_image) as a generated image on this message. */
	async attachImage(messageId: string, image: StoredImage, alt?: string): Promise<MessageView> {
		const stream = this.#open(messageId);
		return this.#serial(messageId, async () => {
			await this.#addImages(messageId, [chatImage(image, alt)], []);
			return this.#changed(messageId, stream);
		});
	}

	/**
	 * Ends the reply once every delta before it is stored: `done`, or `failed` with its error line
	 * (masked, at most 4000 characters). Calls still running are stopped: their rows fail.
	 */
	async finish(messageId: string, outcome: ReplyOutcome): Promise<MessageView> {
		const stream = this.#open(messageId);
		stream.closed = true;
		stream.wake?.();
		return this.#serial(messageId, async () => {
			const { clock } = this.deps;
			const now = clock.now();
			const error =
				outcome.status === "failed"
					? cutToCodePoints(maskCredentials(outcome.error), MAX_ERROR_CHARS) || "The reply failed."
					: null;
			const { store } = this.deps;
			const stopCalls = (db: Db) => stopRunningCalls(db, db.sql`message_id = ${messageId}`, now);
			const end = (db: Db) => db.sql`UPDATE chat_messages SET status = ${outcome.status}, error = ${error},
				updated_at = ${now} WHERE id = ${messageId} RETURNING *`;
			// PostgreSQL: one autocommitted statement (its WITH part runs whole, in the statement's own transaction)
			// instead of BEGIN, two updates and COMMIT after every turn. Besides three round trips, a transaction takes
			// its connection out of Bun's pool and puts it back last, which spread each turn's statements over all ten
			// backends; without it they stay on a few (docs/performance.md, Message to turn frame).
			const row =
				store.kind === "postgres"
					? await store.one(store.sql`WITH stopped AS (${stopCalls(store)}) ${end(store)}`, messageRow)
					: await store.transaction(async (tx) => {
							await stopCalls(tx);
							return tx.one(end(tx), messageRow);
						});
			this.#streams.delete(messageId);
			const view = await this.#view(messageId, row);
			this.deps.hub.publish(stream.documentId, {
				type: "message.updated",
				documentId: stream.documentId,
				message: view,
			});
			return view;
		});
	}

	/**
	 * Takes a failed reply out of Chat for everyone (Retry): its text, Work details rows and failure line. The
	 * images it showed stay among the document's images; only this message named them.
	 */
	async remove(messageId: string): Promise<void> {
		const { store } = this.deps;
		const row = await findMessageRow(store, messageId);
		if (!row) throw new ChatError("message-not-found", `No message ${messageId} exists.`, undefined, 404);
		if (row.role !== "planner" || row.status !== "failed") {
			throw new ChatError(
				"message-not-retryable",
				"Only a failed reply can be taken out of Chat.",
				undefined,
				409,
			);
		}
		await store.transaction(async (tx) => {
			await tx.sql`DELETE FROM chat_tool_calls WHERE message_id = ${messageId}`;
			await tx.sql`DELETE FROM chat_messages WHERE id = ${messageId} AND status = 'failed'`;
		});
		this.deps.hub.publish(row.document_id, {
			type: "message.deleted",
			documentId: row.document_id,
			messageId,
		});
		if (row.thread_root !== null) await publishThreadRoot(this.deps, row.thread_root);
	}

	/**
	 * At start-up: a reply still streaming in the store was left by a process that ended without finishing it
	 * (killed, or crashed), since one process serves a store. Nobody will finish it, so it fails with a sentence
	 * instead of showing the Planner typing for ever; its calls still running fail as finish() fails them.
	 */
	async failInterrupted(): Promise<number> {
		const now = this.deps.clock.now();
		return this.deps.store.transaction(async (tx) => {
			const rows = await tx.many(
				tx.sql`SELECT id FROM chat_messages WHERE status = 'streaming'`,
				z.object({ id: z.string() }),
			);
			if (rows.length === 0) return 0;
			const ids = rows.map((row) => row.id);
			await stopRunningCalls(tx, tx.sql`message_id IN ${tx.sql(ids)}`, now);
			await tx.sql`UPDATE chat_messages SET status = 'failed', error = ${INTERRUPTED}, updated_at = ${now}
				WHERE id IN ${tx.sql(ids)}`;
			return ids.length;
		});
	}

	async #insertTool(messageId: string, toolCallId: string, name: string, input: string): Promise<void> {
		const { store } = this.deps;
		const count = await store.one(
			store.sql`SELECT count(*) AS n FROM chat_tool_calls WHERE message_id = ${messageId}`,
		);
		await store.sql`INSERT INTO chat_tool_calls ${store.sql({
			message_id: messageId,
			tool_call_id: toolCallId,
			position: Number(count?.n ?? 0),
			name,
			input,
			status: "running",
			image_count: 0,
			started_at: this.deps.clock.now(),
		})}`;
	}

	async #addImages(messageId: string, images: ChatImage[], refused: { before: number; reason: string }[]) {
		if (!images.length && !refused.length) return;
		await this.deps.store.transaction(async (tx) => {
			const row = (await findMessageRow(tx, messageId))!;
			await tx.sql`UPDATE chat_messages SET images = ${JSON.stringify([...row.images, ...images])},
				refused_images = ${JSON.stringify([...row.refused_images, ...refused])}, updated_at = ${this.deps.clock.now()}
				WHERE id = ${messageId}`;
		});
	}

	async #changed(messageId: string, stream: Stream): Promise<MessageView> {
		const view = await this.#view(messageId);
		this.deps.hub.publish(stream.documentId, {
			type: "message.updated",
			documentId: stream.documentId,
			message: view,
		});
		return view;
	}

	/** The message as pages show it; `known` is its row when the caller has just read it back. */
	async #view(messageId: string, known?: MessageRow): Promise<MessageView> {
		const row = known ?? (await findMessageRow(this.deps.store, messageId));
		if (!row) throw new ChatError("message-not-found", `No message ${messageId} exists.`, undefined, 404);
		const [view] = await messageViews(this.deps.store, [row]);
		const body = this.liveBody(messageId);
		return body === undefined ? view! : { ...view!, body };
	}

	#open(messageId: string): Stream {
		const stream = this.#streams.get(messageId);
		if (!stream || stream.closed) throw notStreaming(messageId);
		return stream;
	}

	/** Runs fn after every earlier change to the same message, whether or not those failed. */
	#serial<T>(messageId: string, fn: () => Promise<T>): Promise<T> {
		const previous = this.#queues.get(messageId) ?? Promise.resolve();
		const result = previous.then(fn);
		const tail = result.then(
			() => {},
			() => {},
		);
		this.#queues.set(messageId, tail);
		void tail.then(() => {
			if (this.#queues.get(messageId) === tail) this.#queues.delete(messageId);
		});
		return result;
	}
}

/** When the reply's body may be written again (performance.now()): less often as it grows. */
function paceDue(stream: Stream): number {
	const every = Math.max(
		BODY_WRITE_EVERY_MS,
		(stream.body.length - stream.pending.length) / BODY_CHARS_PER_MS,
	);
	return stream.lastWrite + every;
}

function notStreaming(messageId: string): ChatError {
	return new ChatError(
		"message-not-streaming",
		`Message ${messageId} is not a reply this server is streaming.`,
		"Start a reply first; a finished reply takes nothing more.",
		409,
	);
}

function chatImage(image: StoredImage, alt?: string, caption?: string): ChatImage {
	return {
		path: image.path,
		mediaType: image.mediaType,
		width: image.width,
		height: image.height,
		...(alt !== undefined && { alt }),
		...(caption !== undefined && { caption }),
	};
}
