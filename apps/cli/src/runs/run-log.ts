// A run's log as the document page shows it: the agent's ACP updates and output made into redacted lines, message
// chunks joined into whole lines, sent in batches on the control channel and kept (bounded) while it is down.
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { Clock, Timer } from "@chopin/agent-link/clock";
import { RUN_LOG_BATCH_MAX, type RunLogEntry } from "@chopin/agent-link/machine";

type Kind = RunLogEntry["kind"];

/** Entries kept while the channel is down; older ones go first (a note says how many). */
export const RUN_LOG_HELD_MAX = 1000;
/** How long entries wait to be sent together. */
export const RUN_LOG_FLUSH_MS = 250;
/** A message streamed without a newline shows as a line once it has waited this long (or the next entry comes). */
export const RUN_LOG_OPEN_MS = 2000;
const ENTRY_MAX = 4000;

export interface RunLogOptions {
	clock: Clock;
	/** Masks the run's credentials and anything token-shaped. */
	redact(text: string): string;
	/** Sends a batch; false when the channel is down (the batch is kept). */
	send(entries: RunLogEntry[]): boolean;
}

export class RunLog {
	readonly #o: RunLogOptions;
	#held: RunLogEntry[] = [];
	#dropped = 0;
	#timer: Timer | undefined;
	/** A message or thought still being streamed in chunks. */
	#open: { kind: Kind; text: string; since: number } | undefined;

	constructor(options: RunLogOptions) {
		this.#o = options;
	}

	/** One ACP session update. */
	update(update: SessionUpdate): void {
		switch (update.sessionUpdate) {
			case "agent_message_chunk":
			case "agent_thought_chunk":
				if (update.content.type === "text")
					this.#chunk(
						update.sessionUpdate === "agent_message_chunk" ? "message" : "thought",
						update.content.text,
					);
				return;
			case "tool_call":
				this.add(
					"tool",
					`${update.title}${update.kind ? ` (${update.kind})` : ""}${update.status ? `: ${update.status}` : ""}`,
				);
				return;
			case "tool_call_update":
				if (update.status === "completed" || update.status === "failed")
					this.add("tool", `${update.title ?? update.toolCallId}: ${update.status}`);
				return;
			case "plan":
				this.add(
					"plan",
					update.entries
						.map(
							(e) =>
								`${e.status === "completed" ? "[x]" : e.status === "in_progress" ? "[~]" : "[ ]"} ${e.content}`,
						)
						.join("\n"),
				);
				return;
			default:
				// Commands, modes, usage and the like say nothing a reader of the run needs.
				return;
		}
	}

	/** A whole line of some kind (output, permission, note...). */
	add(kind: Kind, text: string): void {
		this.#closeOpen();
		this.#push(kind, text);
	}

	/** Sends what is held now (after the channel came back, or at the run's end: `end` also sends a half line). */
	flush(end = false): void {
		this.#timer?.cancel();
		this.#timer = undefined;
		if (end || (this.#open && this.#o.clock.now() - this.#open.since >= RUN_LOG_OPEN_MS)) this.#closeOpen();
		while (this.#held.length > 0) {
			if (this.#dropped > 0) {
				const note = {
					at: this.#o.clock.now(),
					kind: "note" as const,
					text: `${this.#dropped} earlier log lines were left out while Chopin could not be reached.`,
				};
				this.#dropped = 0;
				this.#held.unshift(note);
			}
			const batch = this.#held.slice(0, RUN_LOG_BATCH_MAX);
			if (!this.#o.send(batch)) return;
			this.#held = this.#held.slice(batch.length);
		}
		// A half line still open is shown once it has waited long enough.
		if (this.#open) this.#schedule();
	}

	#chunk(kind: Kind, text: string): void {
		if (this.#open && this.#open.kind !== kind) this.#closeOpen();
		const joined = (this.#open?.text ?? "") + text;
		const lines = joined.split("\n");
		const rest = lines.pop() ?? "";
		for (const line of lines) if (line.trim() !== "") this.#push(kind, line);
		this.#open =
			rest === "" ? undefined : { kind, text: rest, since: this.#open?.since ?? this.#o.clock.now() };
		this.#schedule();
	}

	#closeOpen(): void {
		const open = this.#open;
		this.#open = undefined;
		if (open && open.text.trim() !== "") this.#push(open.kind, open.text);
	}

	#push(kind: Kind, text: string): void {
		const masked = this.#o.redact(text);
		this.#held.push({
			at: this.#o.clock.now(),
			kind,
			text: masked.length > ENTRY_MAX ? `${masked.slice(0, ENTRY_MAX - 1)}…` : masked,
		});
		if (this.#held.length > RUN_LOG_HELD_MAX) {
			this.#dropped += this.#held.length - RUN_LOG_HELD_MAX;
			this.#held = this.#held.slice(-RUN_LOG_HELD_MAX);
		}
		this.#schedule();
	}

	#schedule(): void {
		this.#timer ??= this.#o.clock.setTimeout(() => {
			this.#timer = undefined;
			this.flush();
		}, RUN_LOG_FLUSH_MS);
	}
}
