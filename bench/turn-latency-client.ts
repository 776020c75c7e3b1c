/**
 * The client side of bench/turn-latency.ts, in its own process. Reads one JSON line on stdin:
 * `{ mode: "agent", url, token, document }` attaches the package client (connectAgent) with a Planner credential and
 * ends each turn at once; `{ mode: "bare", url }` opens a plain WebSocket to the bare forwarder. Prints one JSON line
 * per event, each with `at` (epoch ms, the same clock as the bench's on this machine): attached, then `turn` with the
 * turn's tag (the text after "#" in its prompt) as soon as the frame is parsed and handed over.
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

if (input.mode === "bare") {
	const socket = new WebSocket(input.url);
	socket.addEventListener("open", () => emit({ type: "attached" }));
	socket.addEventListener("message", (event) => {
		const at = now();
		const frame = JSON.parse(String(event.data)) as { type: string; prompt: string };
		if (frame.type === "turn")
			process.stdout.write(`${JSON.stringify({ type: "turn", tag: tagOf(frame.prompt), at })}\n`);
	});
} else {
	await connectAgent({
		url: input.url,
		token: input.token!,
		document: input.document!,
		handlers: {
			start() {},
			turn(turn) {
				const at = now();
				process.stdout.write(`${JSON.stringify({ type: "turn", tag: tagOf(turn.prompt), at })}\n`);
			},
			stop: () => ({ ok: true }),
			resume: () => ({ ok: true }),
		},
		onError: (error) => emit({ type: "error", message: String(error) }),
	});
	emit({ type: "attached" });
}
