/**
 * The agent side of bench/agent-relay.ts, in its own process: one WebSocket per document speaking
 * chopin.agent.v1 (or the bare forwarder's plain socket), streaming text-delta parts one per frame as a
 * model does. Reads commands as JSON lines on stdin (the bearer comes that way, never in arguments) and
 * answers with JSON lines on stdout. Each part's text is `<seq>@<send time>;`: the send time is
 * performance.timeOrigin + performance.now(), a clock the page process shares.
 */
import { commands, reply, SocketWithHeaders } from "./agent-relay-lines";

interface Link {
	ws: WebSocket;
	document: string;
	session?: string;
	turn?: string;
	seq: number;
}

const now = () => performance.timeOrigin + performance.now();
/** The links of each set by name: the bare forwarder's and the server's are connected side by side. */
const sets = new Map<string, { links: Link[]; bare: boolean }>();
const linksOf = (set: string) => sets.get(set)?.links ?? [];

const frame = (link: Link) => {
	const delta = `${link.seq++}@${now().toFixed(3)};`;
	const part = { type: "text-delta", id: "text-1", delta };
	return JSON.stringify({ type: "part", session: link.session, turn: link.turn, part });
};

async function connect(input: {
	set: string;
	url: string;
	token?: string;
	documents: string[];
	bare: boolean;
}) {
	const { bare } = input;
	let turns = 0;
	const allTurns = Promise.withResolvers<void>();
	const links = await Promise.all(
		input.documents.map(
			(document) =>
				new Promise<Link>((resolve, reject) => {
					const ws = bare
						? new WebSocket(`${input.url}/agent?document=${document}`)
						: new SocketWithHeaders(`${input.url}/api/v1/agent`, {
								protocols: ["chopin.agent.v1"],
								headers: { authorization: `Bearer ${input.token}` },
							});
					// The bare forwarder gets the same frames: ids shaped as the server's (s-<uuid>, t-<uuid>).
					const link: Link = bare
						? { ws, document, seq: 0, session: `s-${crypto.randomUUID()}`, turn: `t-${crypto.randomUUID()}` }
						: { ws, document, seq: 0 };
					ws.onerror = () => reject(new Error(`the agent socket for ${document} failed`));
					ws.onopen = () => {
						if (bare) {
							resolve(link);
							return;
						}
						ws.send(JSON.stringify({ type: "attach", version: 1, document }));
					};
					ws.onmessage = (event) => {
						const message = JSON.parse(String(event.data));
						if (message.type === "attached") resolve(link);
						else if (message.type === "start")
							ws.send(JSON.stringify({ type: "started", session: message.session }));
						else if (message.type === "turn") {
							link.session = message.session;
							link.turn = message.turn;
							if (++turns === input.documents.length) allTurns.resolve();
						}
					};
				}),
		),
	);
	sets.set(input.set, { links, bare });
	reply({ ev: "attached" });
	if (!bare) await allTurns.promise;
	reply({ ev: "turns" });
}

/** `rate` parts per second per document for `seconds`, each document on its own staggered beat. */
async function steady(input: { set: string; rate: number; seconds: number }) {
	const links = linksOf(input.set);
	const every = 1000 / input.rate;
	const count = Math.round(input.rate * input.seconds);
	await Promise.all(
		links.map(async (link, i) => {
			await Bun.sleep((every * i) / links.length);
			const t0 = performance.now();
			for (let sent = 0; sent < count; sent++) {
				const wait = t0 + sent * every - performance.now();
				if (wait > 0) await Bun.sleep(wait);
				link.ws.send(frame(link));
			}
		}),
	);
	reply({ ev: "sent", count: count * links.length });
}

/** `parts` per document as fast as each socket takes them, one frame each; waits when a socket backs up. */
async function burst(input: { set: string; parts: number }) {
	const links = linksOf(input.set);
	const first = now();
	await Promise.all(
		links.map(async (link) => {
			for (let sent = 0; sent < input.parts; sent++) {
				link.ws.send(frame(link));
				// Yield now and then, as a model's stream does, so every document's socket gets its turn.
				if (sent % 64 === 63 || link.ws.bufferedAmount > 1 << 20) {
					await Bun.sleep(0);
					while (link.ws.bufferedAmount > 1 << 20) await Bun.sleep(1);
				}
			}
		}),
	);
	reply({ ev: "sent", count: input.parts * links.length, first });
}

function end(input: { set: string }) {
	const links = linksOf(input.set);
	for (const link of links) {
		if (!sets.get(input.set)?.bare) {
			link.ws.send(
				JSON.stringify({ type: "turn-end", session: link.session, turn: link.turn, status: "finished" }),
			);
		}
	}
	reply({ ev: "ended", sent: Object.fromEntries(links.map((l) => [l.document, l.seq])) });
}

function close(input: { set: string }) {
	for (const link of linksOf(input.set)) link.ws.close();
	sets.delete(input.set);
	reply({ ev: "closed" });
}

for await (const command of commands()) {
	if (command.cmd === "connect") await connect(command);
	else if (command.cmd === "steady") await steady(command);
	else if (command.cmd === "burst") await burst(command);
	else if (command.cmd === "end") end(command);
	else if (command.cmd === "close") close(command);
	else if (command.cmd === "exit") process.exit(0);
}
