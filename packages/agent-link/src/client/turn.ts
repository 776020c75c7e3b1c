/**
 * One turn the server asked for: what it carries, and how the backend streams its answer. Parts
 * go out in the order emitted; a tool result whose images must be made smaller holds the parts
 * after it until it is sent. Every turn gets exactly one turn-end.
 */

import type { Timer } from "../clock";
import { EncodeError } from "../encode";
import { TIMING } from "../protocol";
import type { Attachment } from "../schemas/attachments";
import type { ClientMessage, TurnEnd } from "../schemas/client-messages";
import type { StreamPart, ToolResultPart } from "../schemas/parts";
import type {
	HostTool,
	HostToolResult,
	ResponseFormat,
	Turn as TurnMessage,
} from "../schemas/server-messages";
import { cutNote } from "../text";
import { bunImageShrinker } from "./bun-image";
import { messageOf } from "./deferred";
import { LinkError } from "./errors";
import type { Session } from "./session";
import { fitToolResultImages } from "./tool-result-images";
import type { Wire } from "./wire";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** What callHostTool settles with: the host-tool-result, or a local failure (aborted, ended, closed). */
export interface HostToolOutcome {
	output: Json;
	isError: boolean;
}

export type TurnStatus = TurnEnd["status"];

/** Text deltas are cut below the frame limit: 256 Ki UTF-16 units are at most 768 KiB of UTF-8. */
const DELTA_UNITS = 256 * 1024;

export class Turn {
	readonly id: string;
	readonly prompt: string;
	readonly instructions?: string;
	readonly tools: HostTool[];
	readonly model?: string;
	readonly thinkingLevel?: string;
	readonly attachments: Attachment[];
	/** The Chat message the turn answers (retry-turn). */
	readonly message?: string;
	/** This turn runs message again after a failed one (retry-turn). */
	readonly retry: boolean;
	readonly responseFormat?: ResponseFormat;

	readonly #wire: Wire;
	readonly #onDone: () => void;
	readonly #controller = new AbortController();
	readonly #hostCalls = new Map<string, (outcome: HostToolOutcome) => void>();
	readonly #callIds = new Set<string>();
	readonly #ownCalls = new Map<string, string>();
	#state: "running" | "ending" | "ended" = "running";
	#userEnded = false;
	#busy = 0;
	#tail: Promise<void> = Promise.resolve();
	#partIds = 0;
	#abortTimer?: Timer;

	constructor(
		readonly session: Session,
		message: TurnMessage,
		wire: Wire,
		onDone: () => void,
	) {
		this.id = message.turn;
		this.prompt = message.prompt;
		this.instructions = message.instructions;
		this.tools = message.tools;
		this.model = message.model;
		this.thinkingLevel = message.thinkingLevel;
		this.attachments = message.attachments ?? [];
		this.message = message.message;
		this.retry = message.retry === true;
		this.responseFormat = message.responseFormat;
		this.#wire = wire;
		this.#onDone = onDone;
	}

	/** Aborts when the server aborts the turn, or the session or link ends. */
	get signal(): AbortSignal {
		return this.#controller.signal;
	}

	/** Whether the turn can still stream (false once it ended or was abandoned). */
	get ended(): boolean {
		return this.#state !== "running";
	}

	/**
	 * Streams one part. Throws at once when the turn has ended or the server would refuse the
	 * part; the promise settles when the part is written, or rejects when a tool result still
	 * does not fit a frame with its images made smaller or left out.
	 */
	emit(part: StreamPart): Promise<void> {
		this.#assertRunning();
		if (part.type === "tool-call") this.#claimCallId(part.toolCallId);
		if (part.type === "tool-result" && !this.#ownCalls.has(part.toolCallId)) {
			throw new LinkError(
				"tool-not-called",
				"A tool-result must follow its own tool-call part in the same turn.",
				"Emit the tool-call (turn.toolCall) before its result.",
			);
		}
		if (part.type === "tool-call") this.#ownCalls.set(part.toolCallId, part.toolName);
		const message: ClientMessage = { type: "part", session: this.session.id, turn: this.id, part };
		let text: string;
		try {
			text = this.#wire.encode(message);
		} catch (error) {
			if (
				!(error instanceof EncodeError && error.code === "message-too-large" && part.type === "tool-result")
			) {
				throw error;
			}
			return this.#enqueue(async () => {
				const fitted = await fitToolResultImages(message, bunImageShrinker());
				if (!fitted) throw error;
				this.#write(this.#wire.encode(fitted));
			});
		}
		return this.#enqueue(() => this.#write(text));
	}

	/** text-start, the text as deltas, text-end. */
	text(text: string, id = `text-${++this.#partIds}`): Promise<void> {
		return this.#block("text", text, id);
	}

	/** reasoning-start, the text as deltas, reasoning-end. */
	reasoning(text: string, id = `reasoning-${++this.#partIds}`): Promise<void> {
		return this.#block("reasoning", text, id);
	}

	/** Declares the client's own tools this turn may call (before calling any). */
	declareTools(names: string[]): void {
		this.#assertRunning();
		if (this.session.mode === "isolated" && names.length > 0) {
			throw new LinkError(
				"tool-name-taken",
				"An isolated session may declare no tools of its own.",
				"Declare tools only in planner sessions.",
			);
		}
		const taken = names.find((name) => this.tools.some((tool) => tool.name === name));
		if (taken !== undefined) {
			throw new LinkError(
				"tool-name-taken",
				"An own tool may not repeat a host tool's name.",
				"Rename the client's own tool.",
			);
		}
		const text = this.#wire.encode({ type: "tools", session: this.session.id, turn: this.id, names });
		void this.#enqueue(() => this.#write(text));
	}

	/** Emits a tool-call part for an own tool (providerExecuted: true); returns its toolCallId. */
	toolCall(toolName: string, input: unknown = {}, toolCallId: string = crypto.randomUUID()): string {
		void this.emit({
			type: "tool-call",
			toolCallId,
			toolName,
			input: typeof input === "string" ? input : JSON.stringify(input),
			providerExecuted: true,
		});
		return toolCallId;
	}

	/** Emits an own tool's tool-result; images over the frame limit are made to fit first. */
	toolResult(result: Omit<ToolResultPart, "type" | "toolName"> & { toolName?: string }): Promise<void> {
		const toolName = result.toolName ?? this.#ownCalls.get(result.toolCallId) ?? "";
		return this.emit({ ...result, type: "tool-result", toolName });
	}

	/**
	 * Runs one of the turn's host tools in the server. input is the arguments (a JSON string is
	 * sent as it is). Settles with the host-tool-result, or as failed when the turn is aborted or
	 * ends, its session ends, or the link closes.
	 */
	callHostTool(toolName: string, input: unknown = {}): Promise<HostToolOutcome> {
		this.#assertRunning();
		const toolCallId = crypto.randomUUID();
		this.#claimCallId(toolCallId);
		const text = this.#wire.encode({
			type: "host-tool-call",
			session: this.session.id,
			turn: this.id,
			toolCallId,
			toolName,
			input: typeof input === "string" ? input : JSON.stringify(input),
		});
		const outcome = new Promise<HostToolOutcome>((resolve) => this.#hostCalls.set(toolCallId, resolve));
		void this.#enqueue(() => this.#write(text));
		return outcome;
	}

	/** Ends the turn (turn-end) after the parts before it. Exactly once: a second call throws. */
	end(status: TurnStatus = "finished", message?: string): Promise<void> {
		if (this.#userEnded) {
			throw new LinkError("turn-ended", "This turn has already ended.", "Call end() once per turn.");
		}
		this.#userEnded = true;
		if (this.#state !== "running") return Promise.resolve();
		this.#state = "ending";
		return this.#enqueue(() => this.#sendEnd(status, message));
	}

	/** @internal Runs the backend's handler and ends the turn for it when it did not. */
	async run(handler: (turn: Turn) => void | Promise<void>): Promise<void> {
		try {
			await handler(this);
			if (!this.#userEnded) await this.end(this.signal.aborted ? "aborted" : "finished");
		} catch (error) {
			if (this.#userEnded) return this.#wire.report(error);
			await this.end(this.signal.aborted ? "aborted" : "failed", messageOf(error)).catch((e) =>
				this.#wire.report(e),
			);
		}
	}

	/** @internal The server's abort: signal it, fail the host calls, and end the turn within 10 s. */
	abortByServer(): void {
		if (this.#state === "ended" || this.signal.aborted) return;
		this.#controller.abort(new LinkError("turn-ended", "The server aborted the turn."));
		this.#failHostCalls("The turn was aborted.");
		this.#abortTimer = this.#wire.clock.setTimeout(() => {
			if (this.#state === "ended") return;
			this.#sendEnd("aborted", "The turn did not end within 10 seconds of its abort.");
		}, TIMING.answerWithinMs);
	}

	/** @internal A host-tool-result for one of this turn's calls. */
	hostResult(message: HostToolResult): void {
		const settle = this.#hostCalls.get(message.toolCallId);
		if (!settle) return;
		this.#hostCalls.delete(message.toolCallId);
		settle({ output: message.output as Json, isError: message.isError === true });
	}

	/** @internal The session or link ended: stop without a turn-end (the server ends the turn itself). */
	abandon(reason: string): void {
		if (this.#state === "ended") return;
		this.#finish(reason);
		if (!this.signal.aborted) this.#controller.abort(new LinkError("turn-ended", reason));
	}

	#block(kind: "text" | "reasoning", text: string, id: string): Promise<void> {
		this.emit({ type: `${kind}-start`, id });
		for (const delta of chunks(text)) this.emit({ type: `${kind}-delta`, id, delta });
		return this.emit({ type: `${kind}-end`, id });
	}

	#sendEnd(status: TurnStatus, message?: string): void {
		if (this.#state === "ended") return;
		const text = this.#wire.encode({
			type: "turn-end",
			session: this.session.id,
			turn: this.id,
			status,
			...(message === undefined ? {} : { message: cutNote(message) }),
		});
		this.#finish("The turn has ended.");
		this.#write(text, true);
	}

	#finish(reason: string): void {
		this.#state = "ended";
		this.#abortTimer?.cancel();
		this.#failHostCalls(reason);
		this.#onDone();
	}

	#failHostCalls(reason: string): void {
		const calls = [...this.#hostCalls.values()];
		this.#hostCalls.clear();
		for (const settle of calls) settle({ output: { error: reason }, isError: true });
	}

	#claimCallId(toolCallId: string): void {
		if (this.#callIds.has(toolCallId)) {
			throw new LinkError(
				"tool-call-id-repeated",
				"A toolCallId may be used once per turn.",
				"Use a fresh id for each call.",
			);
		}
		this.#callIds.add(toolCallId);
	}

	#assertRunning(): void {
		if (this.#state !== "running") {
			throw new LinkError(
				"turn-ended",
				"This turn has ended.",
				"Stop streaming once turn.signal aborts or end() was called.",
			);
		}
	}

	/** Writes a frame unless the turn was abandoned meanwhile (its parts then go nowhere). */
	#write(text: string, ending = false): void {
		if (this.#state === "ended" && !ending) return;
		try {
			this.#wire.sendText(text);
		} catch (error) {
			if (!(error instanceof LinkError && error.code === "link-closed")) throw error;
		}
	}

	/** Runs task now when nothing is pending (so its errors throw here), else after what is. */
	#enqueue(task: () => void | Promise<void>): Promise<void> {
		if (this.#busy === 0) {
			const result = task();
			if (!(result instanceof Promise)) return Promise.resolve();
			return this.#track(result);
		}
		return this.#track(this.#tail.then(task));
	}

	#track(work: Promise<void>): Promise<void> {
		this.#busy++;
		const done = work.finally(() => {
			this.#busy--;
		});
		this.#tail = done.catch(() => {});
		return done;
	}
}

/** Text in deltas small enough for a frame, never splitting a surrogate pair. */
function chunks(text: string): string[] {
	if (text.length <= DELTA_UNITS) return [text];
	const out: string[] = [];
	for (let at = 0; at < text.length; ) {
		let end = Math.min(text.length, at + DELTA_UNITS);
		const last = text.charCodeAt(end - 1);
		if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
		out.push(text.slice(at, end));
		at = end;
	}
	return out;
}
