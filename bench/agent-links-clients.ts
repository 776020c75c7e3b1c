/**
 * The client side of bench/agent-links.ts, in its own process so its sockets do not count in the server's
 * memory: reads { url, token, documents } on stdin, attaches one raw agent socket per document (answering
 * pings), prints "ready", and stays until killed.
 */
import { connectAgentSocket } from "../apps/server/src/testing/agent-socket";

const input = JSON.parse(await new Response(Bun.stdin.stream()).text()) as {
	url: string;
	token: string;
	documents: string[];
};
const sockets = [];
for (let i = 0; i < input.documents.length; i += 200) {
	const batch = input.documents.slice(i, i + 200);
	sockets.push(
		...(await Promise.all(
			batch.map(async (document) => {
				const socket = await connectAgentSocket({ url: input.url, token: input.token });
				socket.send({ type: "attach", version: 1, document });
				await socket.expect("attached");
				return socket;
			}),
		)),
	);
}
console.log(`ready ${sockets.length}`);
setInterval(() => {}, 1 << 30);
