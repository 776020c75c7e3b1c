// An ACP agent's permission requests: asked on the terminal when the daemon runs in the foreground with one (one
// question at a time, withdrawn when the run pauses), declined when there is none. Never answered for anyone.
import { createInterface } from "node:readline";
import type { RequestPermissionRequest, RequestPermissionResponse } from "@agentclientprotocol/sdk";

/** What a person is asked: which run, and the agent's own request. */
export interface PermissionQuestion {
	run: string;
	/** "build for “Plan title”" */
	about: string;
	request: RequestPermissionRequest;
}

/** Asks a person; resolves with the chosen option's id, or undefined when the question was withdrawn. */
export interface PermissionPrompt {
	ask(question: PermissionQuestion, signal: AbortSignal): Promise<string | undefined>;
}

export const CANCELLED: RequestPermissionResponse = { outcome: { outcome: "cancelled" } };

/**
 * The answer when nobody can be asked (no terminal, under a service): the agent's own "reject once" option,
 * else its "reject always", else cancelled. It declines; it never allows anything.
 */
export function declined(request: RequestPermissionRequest): RequestPermissionResponse {
	const option =
		request.options.find((o) => o.kind === "reject_once") ??
		request.options.find((o) => o.kind === "reject_always");
	return option ? { outcome: { outcome: "selected", optionId: option.optionId } } : CANCELLED;
}

/** One line naming what the agent wants to do, for the log and the terminal. */
export function describeRequest(request: RequestPermissionRequest): string {
	const { toolCall } = request;
	const title = toolCall.title ?? toolCall.toolCallId;
	return toolCall.kind ? `${title} (${toolCall.kind})` : title;
}

/**
 * Questions on the terminal: the daemon's stdin and stderr, one question at a time (runs ask in turn). One
 * reader for the daemon's life: a line typed while no question waits (say, an answer to a question just
 * withdrawn) is dropped, so it can never answer the next one. A withdrawn question says so and reads no more.
 */
export class TerminalPrompt implements PermissionPrompt {
	#queue: Promise<unknown> = Promise.resolve();
	#reader: ReturnType<typeof createInterface> | undefined;
	#current: ((line: string) => void) | undefined;

	constructor(private readonly io: { input: NodeJS.ReadableStream; write(text: string): void }) {}

	ask(question: PermissionQuestion, signal: AbortSignal): Promise<string | undefined> {
		const turn = this.#queue.then(() => this.#ask(question, signal));
		this.#queue = turn.catch(() => {});
		return turn;
	}

	/** Stops reading the terminal (the daemon is stopping). */
	close(): void {
		this.#reader?.close();
		this.#reader = undefined;
	}

	#lines(): void {
		if (this.#reader) return;
		this.#reader = createInterface({ input: this.io.input, terminal: false });
		this.#reader.on("line", (line) => this.#current?.(line));
	}

	#ask(question: PermissionQuestion, signal: AbortSignal): Promise<string | undefined> {
		if (signal.aborted) return Promise.resolve(undefined);
		this.#lines();
		const { options } = question.request;
		const lines = [
			"",
			`The agent of run ${question.run} (${question.about}) asks permission: ${describeRequest(question.request)}`,
			...options.map((o, i) => `  ${i + 1}) ${o.name}`),
			`Answer 1-${options.length}: `,
		];
		this.io.write(lines.join("\n"));
		return new Promise((resolve) => {
			const done = (answer: string | undefined) => {
				signal.removeEventListener("abort", onAbort);
				this.#current = undefined;
				resolve(answer);
			};
			const onLine = (line: string) => {
				const n = Number(line.trim());
				const option = Number.isInteger(n) ? options[n - 1] : undefined;
				if (option) done(option.optionId);
				else this.io.write(`Answer with a number from 1 to ${options.length}: `);
			};
			// The abort's reason says why (the run paused, or it was stopped).
			const onAbort = () => {
				const why = typeof signal.reason === "string" ? signal.reason : `run ${question.run} no longer asks`;
				this.io.write(`\n(withdrawn: ${why})\n`);
				done(undefined);
			};
			this.#current = onLine;
			signal.addEventListener("abort", onAbort, { once: true });
		});
	}
}
