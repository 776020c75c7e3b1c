// A backend's stdout/stderr turned into whole log lines, each redacted; a line too long to mask safely is dropped with a note.
import { createRedactor } from "@chopin/agent-link/redact";
import type { Logger } from "../local/log";

/** Longer lines are left out: a secret split across a chunk boundary of a huge line could escape masking. */
export const MAX_LINE_BYTES = 64 * 1024;

export type OutputLine = { kind: "line"; text: string } | { kind: "dropped"; bytes: number };

/**
 * Collects text a chunk at a time and hands on complete lines (without their newline), masked
 * by `redact`. A line over `maxBytes` is never held whole: its bytes are counted and it is
 * reported as dropped once its newline (or the end) arrives.
 */
export class LineSplitter {
	#buffer = "";
	#dropping = 0;
	readonly #emit: (line: OutputLine) => void;
	readonly #redact: (text: string) => string;
	readonly #maxBytes: number;
	readonly #decoder = new TextDecoder();

	constructor(options: {
		emit: (line: OutputLine) => void;
		redact: (text: string) => string;
		maxBytes?: number;
	}) {
		this.#emit = options.emit;
		this.#redact = options.redact;
		this.#maxBytes = options.maxBytes ?? MAX_LINE_BYTES;
	}

	write(chunk: Uint8Array | string): void {
		let text = typeof chunk === "string" ? chunk : this.#decoder.decode(chunk, { stream: true });
		for (;;) {
			const newline = text.indexOf("\n");
			if (newline < 0) break;
			this.#take(text.slice(0, newline), true);
			text = text.slice(newline + 1);
		}
		this.#take(text, false);
	}

	/** The stream ended: a last line without a newline is still a line. */
	end(): void {
		const rest = this.#decoder.decode();
		if (rest) this.#take(rest, false);
		if (this.#dropping > 0) this.#flushDropped();
		else if (this.#buffer.length > 0) this.#line(this.#buffer);
		this.#buffer = "";
	}

	#take(part: string, complete: boolean): void {
		if (this.#dropping > 0) {
			this.#dropping += byteLength(part);
			if (complete) this.#flushDropped();
			return;
		}
		const joined = this.#buffer + part;
		if (byteLength(joined) > this.#maxBytes) {
			this.#buffer = "";
			this.#dropping = byteLength(joined);
			if (complete) this.#flushDropped();
			return;
		}
		if (complete) {
			this.#buffer = "";
			this.#line(joined);
		} else {
			this.#buffer = joined;
		}
	}

	#line(text: string): void {
		this.#emit({ kind: "line", text: this.#redact(text.endsWith("\r") ? text.slice(0, -1) : text) });
	}

	#flushDropped(): void {
		this.#emit({ kind: "dropped", bytes: this.#dropping });
		this.#dropping = 0;
	}
}

function byteLength(text: string): number {
	return Buffer.byteLength(text, "utf8");
}

/**
 * A backend's two streams as log lines (`info`, with `document` and `stream`), masking its
 * credentials, the --env values and anything token-shaped.
 */
export function backendOutput(options: { log: Logger; document: string; secrets: readonly string[] }): {
	stdout: LineSplitter;
	stderr: LineSplitter;
} {
	const redact = createRedactor(options.secrets);
	const splitter = (stream: "stdout" | "stderr") =>
		new LineSplitter({
			redact,
			emit: (line) => {
				if (line.kind === "line") options.log.info({ document: options.document, stream }, line.text);
				else
					options.log.warn(
						{ document: options.document, stream, bytes: line.bytes },
						"a line of the backend's output was too long to mask and was left out",
					);
			},
		});
	return { stdout: splitter("stdout"), stderr: splitter("stderr") };
}
