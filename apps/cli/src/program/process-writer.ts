// The context's stdout and stderr on the real process: Bun's file sink on the descriptor, Node's stream only where needed.
//
// Building process.stdout (or stderr) loads Node's stream modules, and importing node:fs costs ~4 ms too; a plain
// `chopin status` needs neither (docs/install.md § Start-up time). So a write goes to Bun's sink for the descriptor
// (Bun.stdout / Bun.stderr) and is flushed at once: what the descriptor takes now is written now, and when it cannot
// take it all (a full non-blocking pipe) the sink keeps the rest, in order, and the process stays alive until it is
// written. Whether it is a terminal, and its width, ask the stream. Windows always uses the stream: its console wants
// the stream's UTF-16 conversion.
import type { Writer } from "./context";

export interface ProcessOutput {
	fd: 1 | 2;
	/** process.stdout or process.stderr, built on first use. */
	stream: () => NodeJS.WriteStream;
	platform?: NodeJS.Platform;
}

export function processWriter({ fd, stream, platform = process.platform }: ProcessOutput): Writer {
	// A reader that went away (`chopin logs | head`) is not an error: stop writing to it, quietly.
	let closed = false;
	const isClosedPipe = (error: unknown) => (error as NodeJS.ErrnoException)?.code === "EPIPE";
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
	let sink: Bun.FileSink | undefined;
	const write =
		platform === "win32"
			? (text: string) => viaStream().write(text)
			: (text: string) => {
					sink ??= (fd === 1 ? Bun.stdout : Bun.stderr).writer();
					sink.write(text);
					// A promise when the descriptor could not take it all: the sink writes the rest as the reader reads.
					const pending = sink.flush();
					if (pending instanceof Promise)
						pending.catch((error) => {
							if (!isClosedPipe(error)) throw error;
							closed = true;
						});
				};
	if (platform === "win32") viaStream();

	return {
		write: (text) => {
			if (closed) return;
			try {
				write(text);
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
