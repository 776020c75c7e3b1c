/**
 * The client side of bench/turn-latency.ts, in its own process. Reads one JSON line on stdin:
 * `{ mode: "agent", url, token, document }` attaches the package client (connectAgent) with a Planner credential and
 * ends each turn at once; `{ mode: "bare", url }` opens a plain WebSocket to the bare forwarder. Prints one JSON line
 * per event, each with `at` (epoch ms, the same clock as the bench's on this machine): attached, then `turn` with the
 * turn's tag (the text after "#" in its prompt) as soon as the frame is parsed and handed over, and the times the
 * turn's frames crossed the socket (`start` and `turn` read off it, `started` written to it), for the bench's split.
 */
import { connectAgent } from "../packages/agent-link/src/client/index";

const now = () => performance.timeOrigin + performance.now();
const emit = (event: Record<string, unknown>) =>
	process.stdout.write(`${JSON.stringify({ ...event, at: now() })}\n`);

const input = JSON.parse(
	(await (console as unknown as AsyncIterable<string>)[Symbol.asyncIterator]().next()).value,
) as {
	mode: "agent" | "bare";
	url: string;
	token?: string;
	document?: string;
};

/** The tag the bench put in the prompt ("@chopin turn #12"), to pair the frame with its POST. */
const tagOf = (text: string) => /#(\d+)/.exec(text)?.[1];

/** When the last frame of each kind crossed the socket: read (`start`, `turn`) or written (`started`). */
const wire: Record<string, number> = {};
const FRAME_TYPE = /^\{"type":"([a-z-]+)"/;

/** Bun's WebSocket, stamping each frame before the package client's listener sees it and as it writes one. */
class StampedSocket extends WebSocket {
	constructor(...args: ConstructorParameters<typeof WebSocket>) {
		super(...args);
		// Listeners run in the order they were added: this one before the client's.
		this.addEventListener("message", (event) => {
			const kind = FRAME_TYPE.exec(String(event.data))?.[1];
			if (kind) wire[kind] = now();
		});
	}

	override send(data: Parameters<WebSocket["send"]>[0]): void {
		super.send(data);
		const kind = typeof data === "string" ? FRAME_TYPE.exec(data)?.[1] : undefined;
		if (kind) wire[`${kind}-out`] = now();
	}
}

if (input.mode === "bare") {
	const socket = new WebSocket(input.url);
	socket.addEventListener("open", () => emit({ type: "attached" }));
	socket.addEventListener("message", (event) => {
		const turnIn = now();
		const frame = JSON.parse(String(event.data)) as { type: string; prompt: string };
		const at = now();
		if (frame.type === "turn")
			process.stdout.write(`${JSON.stringify({ type: "turn", tag: tagOf(frame.prompt), at, turnIn })}\n`);
	});
} else {
	await connectAgent({
		url: input.url,
		WebSocket: StampedSocket,
		token: input.token!,
		document: input.document!,
		handlers: {
			start() {},
			turn(turn) {
				const at = now();
				const { start: startIn, "started-out": startedOut, turn: turnIn } = wire;
				const line = { type: "turn", tag: tagOf(turn.prompt), at, startIn, startedOut, turnIn };
				process.stdout.write(`${JSON.stringify(line)}\n`);
			},
			stop: () => ({ ok: true }),
			resume: () => ({ ok: true }),
		},
		onError: (error) => emit({ type: "error", message: String(error) }),
	});
	emit({ type: "attached" });
}
