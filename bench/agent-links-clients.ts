/**
 * The client side of bench/agent-links.ts, in its own process so its sockets do not count in the server's
 * memory: reads { url, links: [{ token, document }] } on stdin, attaches one raw agent socket per document with
 * its account's bearer (answering pings), prints "ready", and stays until killed.
 */
import { connectAgentSocket } from "../apps/server/src/testing/agent-socket";

const input = JSON.parse(await new Response(Bun.stdin.stream()).text()) as {
	url: string;
	links: { token: string; document: string }[];
};
const sockets = [];
for (let i = 0; i < input.links.length; i += 200) {
	const batch = input.links.slice(i, i + 200);
	sockets.push(
		...(await Promise.all(
			batch.map(async ({ token, document }) => {
				const socket = await connectAgentSocket({ url: input.url, token });
				socket.send({ type: "attach", version: 1, document });
				await socket.expect("attached");
				return socket;
			}),
		)),
	);
}
console.log(`ready ${sockets.length}`);
setInterval(() => {}, 1 << 30);
