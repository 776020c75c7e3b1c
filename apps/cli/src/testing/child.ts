// Starts a test fixture as a real child process and waits for the line it prints when ready.
import { join } from "node:path";
import type { Subprocess } from "bun";

export interface Fixture {
	readonly process: Subprocess<"pipe", "pipe", "pipe">;
	/** The first line the fixture printed. */
	readonly ready: string;
	readonly pid: number;
	write(text: string): void;
	/** SIGKILLs it (if still running) and waits until it is reaped. */
	kill(): Promise<void>;
}

const running = new Set<Fixture>();

export async function startFixture(name: string, args: string[]): Promise<Fixture> {
	const child = Bun.spawn([process.execPath, join(import.meta.dir, "fixtures", `${name}.ts`), ...args], {
		stdin: "pipe",
		stdout: "pipe",
		stderr: "pipe",
	});
	const ready = await firstLine(child.stdout);
	if (ready === undefined) {
		const stderr = await new Response(child.stderr).text();
		throw new Error(`fixture ${name} exited before it was ready: ${stderr}`);
	}
	const fixture: Fixture = {
		process: child,
		ready,
		pid: child.pid,
		write: (text) => {
			child.stdin.write(text);
			child.stdin.flush();
		},
		kill: async () => {
			running.delete(fixture);
			if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
			await child.exited;
		},
	};
	running.add(fixture);
	return fixture;
}

/** Kills every fixture a test left running (for afterEach). */
export async function killFixtures(): Promise<void> {
	await Promise.all([...running].map((f) => f.kill()));
}

async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string | undefined> {
	const reader = stream.getReader();
	const decoder = new TextDecoder();
	let text = "";
	try {
		for (;;) {
			const { value, done } = await reader.read();
			if (done) return undefined;
			text += decoder.decode(value, { stream: true });
			const newline = text.indexOf("\n");
			if (newline >= 0) return text.slice(0, newline);
		}
	} finally {
		reader.releaseLock();
	}
}
