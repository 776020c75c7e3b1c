/**
 * The page side of bench/agent-relay.ts, in its own process: one WebSocket per document connected as a
 * signed-in member's page is (/ws?document=<id>, the server's Origin, the sign-in cookie), counting every
 * text part of the message.delta events it gets, checking their order, and timing each one against the send
 * time the agent process wrote into it (performance.timeOrigin + performance.now() in both processes).
 * Commands as JSON lines on stdin (the cookie comes that way), answers on stdout.
 */
import { commands, latencySummary, type PagesConnect, reply, SocketWithHeaders } from "./agent-relay-lines";

const now = () => performance.timeOrigin + performance.now();
/** The page sockets of each set by name: the bare forwarder's and the server's are open side by side. */
const sockets = new Map<string, WebSocket[]>();
/** The next part's sequence number per document: a part out of order or missing stops the bench. */
const nextSeq = new Map<string, number>();
let received = 0;
let events = 0;
let lastAt = 0;
let latencies: number[] = [];
let waiting: { count: number; resolve: () => void } | undefined;

function onDelta(documentId: string, delta: string) {
	const at = now();
	events++;
	let start = 0;
	for (let end = delta.indexOf(";"); end >= 0; start = end + 1, end = delta.indexOf(";", start)) {
		const at_ = delta.indexOf("@", start);
		const seq = Number(delta.slice(start, at_));
		const expected = nextSeq.get(documentId) ?? 0;
		if (seq !== expected) {
			reply({ ev: "error", message: `document ${documentId}: part ${seq} came where ${expected} was due` });
			process.exit(1);
		}
		nextSeq.set(documentId, seq + 1);
		latencies.push(at - Number(delta.slice(at_ + 1, end)));
		if (process.env.RELAY_TRACE && at - Number(delta.slice(at_ + 1, end)) > 5)
			console.error(
				`slow ${documentId.slice(0, 6)} #${seq} ${(at - Number(delta.slice(at_ + 1, end))).toFixed(1)} ms at ${(at % 100000).toFixed(0)}`,
			);
		received++;
	}
	lastAt = at;
	if (waiting && received >= waiting.count) waiting.resolve();
}

async function connect(input: PagesConnect) {
	for (const document of input.documents) nextSeq.delete(document);
	const opened = await Promise.all(
		input.documents.map(
			(document) =>
				new Promise<WebSocket>((resolve, reject) => {
					const ws = new SocketWithHeaders(`${input.url.replace(/^http/, "ws")}/ws?document=${document}`, {
						headers: {
							...(input.origin && { origin: input.origin }),
							...(input.cookie && { cookie: input.cookie }),
						},
					});
					ws.onerror = () => reject(new Error(`the page socket for ${document} failed`));
					ws.onclose = (event) => {
						if (event.code !== 1000) reply({ ev: "error", message: `page socket closed ${event.code}` });
					};
					ws.onmessage = (event) => {
						const message = JSON.parse(String(event.data));
						if (message.type === "ready") resolve(ws);
						else if (message.type === "message.delta") onDelta(message.documentId, message.delta);
					};
				}),
		),
	);
	sockets.set(input.set, opened);
	reply({ ev: "ready" });
}

function reset() {
	received = 0;
	events = 0;
	latencies = [];
	reply({ ev: "reset" });
}

async function expect(input: { count: number }) {
	if (received < input.count) {
		await new Promise<void>((resolve) => {
			waiting = { count: input.count, resolve };
		});
		waiting = undefined;
	}
	reply({ ev: "done", received, events, lastAt, ...latencySummary(latencies) });
}

for await (const command of commands()) {
	if (command.cmd === "connect") await connect(command);
	else if (command.cmd === "reset") reset();
	else if (command.cmd === "expect") await expect(command);
	else if (command.cmd === "close") {
		for (const ws of sockets.get(command.set) ?? []) ws.close(1000);
		sockets.delete(command.set);
		reply({ ev: "closed" });
	} else if (command.cmd === "exit") process.exit(0);
}
