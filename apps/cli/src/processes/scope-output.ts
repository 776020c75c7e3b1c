// A scope's pipes: output read as it comes and never waited on without a bound (a process that outlives the leader,
// or left the scope, may hold a pipe open forever: PLATFORM-RUNS c), and stdin as a writer for an ACP agent.
import type { FileSink } from "bun";

export interface PipeReader {
	/** Resolves once the pipe is closed by every writer, or was cut. */
	readonly done: Promise<void>;
	/** Stops reading now: the reader is cancelled (its end of the pipe closed) and `done` resolves. */
	cut(): Promise<void>;
}

/** Reads a pipe to its end, handing on each chunk as it arrives. */
export function readPipe(
	stream: ReadableStream<Uint8Array>,
	onChunk: (chunk: Uint8Array) => void,
): PipeReader {
	const reader = stream.getReader();
	let cutting = false;
	const done = (async () => {
		try {
			for (;;) {
				const { value, done: end } = await reader.read();
				if (end) return;
				if (value && !cutting) onChunk(value);
			}
		} catch {
			// Cancelled, or the pipe broke: either way it is over.
		}
	})();
	return {
		done,
		cut: async () => {
			cutting = true;
			await reader.cancel().catch(() => {});
			await done;
		},
	};
}

/**
 * A stream the caller reads (an ACP agent's stdout), fed from the pipe's reader: chunks are
 * queued as they arrive, so the pipe is drained whether or not the caller keeps up, and the stream
 * closes when the pipe does or is cut. Cancelling it cuts the pipe.
 */
export function outputStream(): {
	stream: ReadableStream<Uint8Array>;
	push(chunk: Uint8Array): void;
	close(): void;
	onCancel(cancel: () => void): void;
} {
	let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
	let closed = false;
	let cancelled: () => void = () => {};
	const stream = new ReadableStream<Uint8Array>({
		start(c) {
			controller = c;
		},
		cancel() {
			closed = true;
			cancelled();
		},
	});
	return {
		stream,
		push: (chunk) => {
			if (!closed) controller?.enqueue(chunk);
		},
		close: () => {
			if (closed) return;
			closed = true;
			controller?.close();
		},
		onCancel: (cancel) => {
			cancelled = cancel;
		},
	};
}

/** A scope's stdin: what an ACP client writes its JSON-RPC lines to. */
export interface ScopeStdin {
	/** Writes and flushes; false once stdin is ended or the process no longer reads it. */
	write(chunk: Uint8Array | string): boolean;
	/** Closes stdin (the process reads end of file); idempotent. */
	end(): void;
}

export function stdinWriter(sink: FileSink): ScopeStdin {
	let open = true;
	const broken = () => {
		open = false;
	};
	return {
		write: (chunk) => {
			if (!open) return false;
			try {
				sink.write(chunk);
				const flushed = sink.flush();
				if (flushed instanceof Promise) flushed.catch(broken);
				return true;
			} catch {
				broken();
				return false;
			}
		},
		end: () => {
			if (!open) return;
			open = false;
			try {
				const ended = sink.end();
				if (ended instanceof Promise) ended.catch(() => {});
			} catch {
				// Already closed by the other side.
			}
		},
	};
}
