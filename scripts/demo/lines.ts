// A child process's output a line at a time, for the demo's status lines.

/** Calls `each` with every line of the stream (without its newline), the last one too. */
export async function lines(stream: ReadableStream<Uint8Array>, each: (line: string) => void): Promise<void> {
	const decoder = new TextDecoder();
	let pending = "";
	for await (const chunk of stream) {
		pending += decoder.decode(chunk, { stream: true });
		let at = pending.indexOf("\n");
		while (at >= 0) {
			each(pending.slice(0, at));
			pending = pending.slice(at + 1);
			at = pending.indexOf("\n");
		}
	}
	if (pending) each(pending);
}
