/**
 * The client side of bench/restart-handover.ts, in its own process: one package client (`connectAgent`, then
 * `reconnectAgent` after each close) per document, each asking one question in the first turn it gets. Reads
 * line-delimited JSON on stdin: first `{ url, planners: [{ document, token, held }] }`, then `{ go: <document> }`
 * for a held Planner, which waits for it before it resumes after a restart (the bench answers its question first).
 * Prints one JSON line per event, each with `at` (epoch ms): attached, asked, restarting, closed, resumed (the
 * frame, with the sessions and requests it keeps), back (reconnectAgent resolved), input-result (every such frame),
 * input-received (every one sent), failed (an attempt to come back, and what it met), settled (the question's promise), error.
 */
import {
	type AgentLink,
	type ConnectOptions,
	connectAgent,
	type LinkClosed,
	reconnectAgent,
} from "../packages/agent-link/src/client/index";

interface Planner {
	document: string;
	token: string;
	held: boolean;
}

const now = () => performance.timeOrigin + performance.now();
const emit = (event: Record<string, unknown>) =>
	process.stdout.write(`${JSON.stringify({ ...event, at: now() })}\n`);

const lines = (async function* () {
	for await (const line of console) if (line.trim()) yield JSON.parse(line) as Record<string, unknown>;
})();
const first = (await lines.next()).value as { url: string; planners: Planner[] };
const released = new Map<string, () => void>();
const gates = new Map<string, Promise<void>>();
for (const p of first.planners) {
	if (p.held) gates.set(p.document, new Promise<void>((resolve) => released.set(p.document, resolve)));
}
void (async () => {
	for await (const command of lines) released.get(String(command.go))?.();
})();

/** Bun's WebSocket, seeing every frame of one document's links: the input-result frames in, input-received out. */
function countingSocket(document: string) {
	return class extends WebSocket {
		constructor(url: string, options: { protocols: string[]; headers: Record<string, string> }) {
			super(url, options as never);
			this.addEventListener("message", (event) => {
				const text = typeof event.data === "string" ? event.data : new TextDecoder().decode(event.data);
				const message = JSON.parse(text) as Record<string, unknown>;
				if (message.type === "input-result") {
					emit({ type: "input-result", document, request: message.request, status: message.status });
				} else if (message.type === "resumed") {
					emit({ type: "resumed", document, sessions: message.sessions });
				}
			});
		}

		override send(data: Parameters<WebSocket["send"]>[0]): void {
			if (typeof data === "string" && data.includes('"input-received"')) {
				const message = JSON.parse(data) as { type: string; request: string };
				if (message.type === "input-received")
					emit({ type: "input-received", document, request: message.request });
			}
			super.send(data);
		}
	};
}

function options(p: Planner): ConnectOptions {
	return {
		url: first.url,
		token: p.token,
		document: p.document,
		WebSocket: countingSocket(p.document),
		handlers: {
			start() {},
			turn(turn) {
				const asked = turn.session.ask({ method: "confirm", title: "Ship it?", message: "" });
				emit({ type: "asked", document: p.document, request: asked.request });
				void asked.then((result) =>
					emit({
						type: "settled",
						document: p.document,
						request: result.request,
						status: result.status,
						local: "local" in result,
						value: "value" in result ? result.value : undefined,
					}),
				);
			},
			stop: () => ({ ok: true }),
			resume: () => ({ ok: true }),
			restarting: (ms) => emit({ type: "restarting", document: p.document, ms }),
		},
		onError: (error) => emit({ type: "error", document: p.document, message: String(error) }),
	};
}

/** What a failed attempt met, without its message (which may name the endpoint). */
function failure(error: unknown): string {
	const e = error as { name?: string; code?: string; status?: number };
	return [e.name ?? "Error", e.code, e.status].filter((part) => part !== undefined).join(" ");
}

async function run(p: Planner): Promise<void> {
	const opts = options(p);
	let link: AgentLink = await connectAgent(opts);
	emit({ type: "attached", document: p.document });
	for (;;) {
		const closed: LinkClosed = await link.closed;
		emit({
			type: "closed",
			document: p.document,
			code: closed.code,
			resumable: closed.resume !== undefined,
			...(closed.refused && { refused: closed.refused.code }),
			...(closed.error && { error: closed.error.code }),
		});
		if (!closed.resume) return;
		const gate = gates.get(p.document);
		if (gate) {
			gates.delete(p.document);
			await gate;
		}
		let attempts = 0;
		link = await reconnectAgent(opts, closed, {
			onEvent: (event) => {
				if (event.type === "attempt") attempts = event.attempt;
				if (event.type === "failed")
					emit({ type: "failed", document: p.document, kind: failure(event.error) });
			},
		});
		emit({ type: "back", document: p.document, attempts });
	}
}

await Promise.all(
	first.planners.map((p) =>
		run(p).catch((error: unknown) => emit({ type: "error", document: p.document, message: String(error) })),
	),
);
