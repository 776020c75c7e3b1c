/**
 * The same-run baseline of bench/turn-latency.ts, in its own process: a bare Bun HTTP -> WebSocket forwarder. A POST
 * /messages with a JSON body `{ body }` is answered 201 after one `turn` frame carrying it went to the attached
 * socket (GET /ws): the least a server can do between the message's request and its turn frame. Prints its URL.
 */
let socket: Bun.ServerWebSocket<unknown> | undefined;
let turns = 0;
const server = Bun.serve({
	hostname: "127.0.0.1",
	port: 0,
	async fetch(req, srv) {
		const url = new URL(req.url);
		if (url.pathname === "/ws")
			return srv.upgrade(req) ? undefined : new Response("upgrade", { status: 400 });
		if (req.method !== "POST" || !socket) return new Response("no", { status: 404 });
		const { body } = (await req.json()) as { body: string };
		socket.send(JSON.stringify({ type: "turn", session: "s", turn: `t${++turns}`, prompt: body, tools: [] }));
		return Response.json({ message: { body } }, { status: 201 });
	},
	websocket: {
		open(ws) {
			socket = ws;
		},
		message() {},
	},
});
console.log(server.url.href);
