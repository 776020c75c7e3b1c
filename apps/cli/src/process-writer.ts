// The context's stdout and stderr on the real process: written straight to the descriptor, through Node's stream only when needed.
//
// Building process.stdout (or stderr) loads Node's stream modules, ~4 ms of every command's start
// (docs/install.md § Start-up time), and most commands write a few lines. So a write goes to the
// descriptor with fs.writeSync. When the descriptor cannot take it whole (a non-blocking pipe that
// is full: EAGAIN), the rest and every later write go through the stream, which waits for the
// reader, so the order holds. Whether it is a terminal, and its width, ask the stream. Windows
// always uses the stream: its console wants the stream's UTF-16 conversion.
import { writeSync } from "node:fs";
import type { Writer } from "./context";

export interface ProcessOutput {
	fd: number;
	/** process.stdout or process.stderr, built on first use. */
	stream: () => NodeJS.WriteStream;
	platform?: NodeJS.Platform;
}

export function processWriter({ fd, stream, platform = process.platform }: ProcessOutput): Writer {
	// A reader that went away (`chopin logs | head`) is not an error: stop writing to it, quietly.
	let closed = false;
	const isClosedPipe = (error: unknown) => (error as NodeJS.ErrnoException).code === "EPIPE";
	let open: NodeJS.WriteStream | undefined;
	const viaStream = (): NodeJS.WriteStream => {
		if (!open) {
			open = stream();
			open.on("error", (error) => {
				if (!isClosedPipe(error)) throw error;
				closed = true;
			});
		}
		return open;
	};
	if (platform === "win32") viaStream();

	/** Writes what the descriptor takes now; returns the rest (empty when all of it went). */
	const direct = (text: string): Uint8Array | string => {
		const bytes = Buffer.from(text);
		let done = 0;
		try {
			while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done);
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
		}
		return done === bytes.length ? "" : bytes.subarray(done);
	};

	return {
		write: (text) => {
			if (closed) return;
			try {
				const rest = open ? text : direct(text);
				if (rest.length > 0) viaStream().write(rest);
			} catch (error) {
				if (!isClosedPipe(error)) throw error;
				closed = true;
			}
		},
		get isTTY() {
			return Boolean(viaStream().isTTY);
		},
		get columns() {
			const s = viaStream();
			return s.isTTY ? s.columns : undefined;
		},
	};
}
