// For the example's tests: planner-echo as a real child process (bun src/main.ts) with the connector's
// environment, its stderr kept line by line so a test can wait for a line.
import { join } from "node:path";
import type { Subprocess } from "bun";

const MAIN = join(import.meta.dir, "..", "main.ts");

export class EchoProcess {
	readonly lines: string[] = [];
	readonly #waiters = new Set<() => void>();
	readonly #child: Subprocess<"ignore", "pipe", "pipe">;
	readonly exited: Promise<number>;

	constructor(env: Record<string, string>) {
		// Only what the test names (and PATH), so nothing of the test's own environment leaks in.
		this.#child = Bun.spawn([process.execPath, MAIN], {
			env: { PATH: process.env.PATH ?? "", ...env },
			stdin: "ignore",
			stdout: "pipe",
			stderr: "pipe",
		});
		const read = Promise.all([this.#read(this.#child.stderr), this.#read(this.#child.stdout)]);
		this.exited = this.#child.exited.then(async (code) => {
			await read;
			return code;
		});
	}

	get pid(): number {
		return this.#child.pid;
	}

	/** Everything it printed so far. */
	get output(): string {
		return this.lines.join("\n");
	}

	/** Waits until count lines (default 1) match; fails with the output when the process exits first. */
	async waitFor(pattern: RegExp, count = 1): Promise<string> {
		let exited = false;
		void this.exited.then(() => {
			exited = true;
			for (const wake of this.#waiters) wake();
		});
		for (;;) {
			const matches = this.lines.filter((line) => pattern.test(line));
			if (matches.length >= count) return matches[count - 1]!;
			if (exited) throw new Error(`planner-echo exited before printing ${pattern}:\n${this.output}`);
			await new Promise<void>((resolve) => {
				const wake = () => {
					this.#waiters.delete(wake);
					resolve();
				};
				this.#waiters.add(wake);
			});
		}
	}

	signal(name: "SIGTERM" | "SIGINT"): void {
		this.#child.kill(name);
	}

	/** SIGKILLs it if it still runs, and waits until it is reaped. */
	async kill(): Promise<void> {
		if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill("SIGKILL");
		await this.exited;
	}

	async #read(stream: ReadableStream<Uint8Array>): Promise<void> {
		const decoder = new TextDecoder();
		let text = "";
		for await (const chunk of stream) {
			text += decoder.decode(chunk, { stream: true });
			let newline = text.indexOf("\n");
			while (newline >= 0) {
				this.lines.push(text.slice(0, newline));
				text = text.slice(newline + 1);
				newline = text.indexOf("\n");
			}
			for (const wake of [...this.#waiters]) wake();
		}
		if (text) this.lines.push(text);
		for (const wake of [...this.#waiters]) wake();
	}
}
