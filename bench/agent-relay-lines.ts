/** JSON lines between bench/agent-relay.ts and its client processes: commands on stdin, answers on stdout. */

// biome-ignore lint/suspicious/noExplicitAny: commands are the bench's own, read back as it wrote them.
export async function* commands(): AsyncGenerator<any> {
	const decoder = new TextDecoder();
	let buffered = "";
	for await (const chunk of Bun.stdin.stream()) {
		buffered += decoder.decode(chunk, { stream: true });
		let newline = buffered.indexOf("\n");
		while (newline >= 0) {
			const line = buffered.slice(0, newline);
			buffered = buffered.slice(newline + 1);
			if (line.trim()) yield JSON.parse(line);
			newline = buffered.indexOf("\n");
		}
	}
}

/** Bun's WebSocket, which takes headers and protocols in its options (the DOM type does not say so). */
export const SocketWithHeaders = WebSocket as unknown as new (
	url: string,
	options: { protocols?: string[]; headers?: Record<string, string> },
) => WebSocket;

/** The page processes' connect command: the set's sockets, one per document, with the page's Origin and cookie. */
export interface PagesConnect {
	set: string;
	url: string;
	origin?: string;
	cookie?: string;
	documents: string[];
}

/** p50, p99 and max of the added latencies a page process measured, in ms. */
export function latencySummary(latencies: readonly number[]): { p50: number; p99: number; max: number } {
	const sorted = Float64Array.from(latencies).sort();
	const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
	return { p50: pct(50), p99: pct(99), max: sorted.at(-1)! };
}

export function reply(answer: object): void {
	process.stdout.write(`${JSON.stringify(answer)}\n`);
}

/** A client process driven by JSON lines: send a command, wait for the answer with the named event. */
export class LineChild {
	readonly #child: Bun.Subprocess<"pipe", "pipe", "inherit">;
	readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
	readonly #decoder = new TextDecoder();
	#buffered = "";

	constructor(script: string) {
		this.#child = Bun.spawn(["bun", script], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
		this.#reader = this.#child.stdout.getReader();
	}

	send(command: object): void {
		this.#child.stdin.write(`${JSON.stringify(command)}\n`);
		void this.#child.stdin.flush();
	}

	// biome-ignore lint/suspicious/noExplicitAny: the answer is the child's own JSON.
	async expect(ev: string): Promise<any> {
		for (;;) {
			const newline = this.#buffered.indexOf("\n");
			if (newline >= 0) {
				const line = this.#buffered.slice(0, newline);
				this.#buffered = this.#buffered.slice(newline + 1);
				const answer = JSON.parse(line);
				if (answer.ev === ev) return answer;
				if (answer.ev === "error") throw new Error(answer.message);
				continue;
			}
			const { value, done } = await this.#reader.read();
			if (done) throw new Error(`the client process exited waiting for ${ev}`);
			this.#buffered += this.#decoder.decode(value, { stream: true });
		}
	}

	async command(command: object, ev: string) {
		this.send(command);
		return this.expect(ev);
	}

	kill(): void {
		this.#child.kill();
	}
}
