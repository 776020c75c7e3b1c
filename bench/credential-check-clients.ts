/**
 * The client side of bench/credential-check.ts, in its own process so the clients' work is not the server's:
 * reads one job as JSON on stdin (credentials travel there, never in arguments), runs `clients` concurrent
 * clients that each make `requests` requests one after the other (after `warmup` unmeasured ones), and
 * prints { samples } (milliseconds per request, from sending it to its answer) as one JSON line.
 *
 * Kinds: "ping" GET /api/connector/ping (checks nothing); "machine-http" GET /api/connector/github-token
 * with a chopin_m_ bearer (the credential check, then the machine's authorization from memory: 204);
 * "planner-http" GET /api/v1/agent with a chopin_p_ bearer and the subprotocol but no Upgrade (every check
 * an upgrade makes, then 400); "planner-ws" the real WebSocket upgrade of /api/v1/agent, timed to `open`
 * and closed at once; "bare-ws" the same upgrade to a Bun server that checks nothing.
 *
 *   bun bench/credential-check-clients.ts            (a job on stdin)
 *   bun bench/credential-check-clients.ts --bare     (the bare WebSocket server: prints its port)
 */
import { SUBPROTOCOL } from "../packages/agent-link/src/index";

if (process.argv[2] === "--bare") {
	const server = Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		fetch(req, srv) {
			if (srv.upgrade(req, { headers: { "Sec-WebSocket-Protocol": SUBPROTOCOL } })) return undefined;
			return new Response("upgrade", { status: 400 });
		},
		websocket: { message() {} },
	});
	console.log(String(server.port));
	setInterval(() => {}, 1 << 30);
} else {
	const job = JSON.parse(await new Response(Bun.stdin.stream()).text()) as {
		kind: "ping" | "machine-http" | "planner-http" | "planner-ws" | "bare-ws";
		url: string;
		clients: number;
		requests: number;
		warmup: number;
		/** Per client: the credentials it picks from, in turn. */
		tokens: string[][];
	};
	const { kind, url } = job;
	const CLIENT = "chopin/0.2.0 (linux-x64; npm)";

	async function once(token: string | undefined): Promise<void> {
		if (kind === "planner-ws" || kind === "bare-ws") {
			const target = `${url.replace(/^http/, "ws")}${kind === "planner-ws" ? "/api/v1/agent" : "/"}`;
			const socket = new WebSocket(target, {
				protocols: [SUBPROTOCOL],
				headers: token ? { authorization: `Bearer ${token}` } : {},
			} as never);
			await new Promise<void>((resolve, reject) => {
				socket.onopen = () => resolve();
				socket.onerror = () => reject(new Error(`${kind}: the upgrade failed`));
				socket.onclose = (event) => reject(new Error(`${kind}: closed ${event.code} before it opened`));
			});
			socket.onclose = null;
			socket.onerror = null;
			socket.close(1000);
			return;
		}
		const headers: Record<string, string> = {};
		let path = "/api/connector/ping";
		let expected = 204;
		if (kind === "machine-http") {
			path = "/api/connector/github-token";
			headers.authorization = `Bearer ${token}`;
			headers["chopin-client"] = CLIENT;
		} else if (kind === "planner-http") {
			path = "/api/v1/agent";
			headers.authorization = `Bearer ${token}`;
			headers["sec-websocket-protocol"] = SUBPROTOCOL;
			expected = 400;
		}
		const res = await fetch(`${url}${path}`, { headers });
		await res.arrayBuffer();
		if (res.status !== expected) throw new Error(`${kind}: ${path} answered ${res.status}, not ${expected}`);
	}

	const samples: number[] = [];
	await Promise.all(
		Array.from({ length: job.clients }, async (_, client) => {
			const tokens = job.tokens[client] ?? [];
			let next = 0;
			const pick = () => (tokens.length ? tokens[next++ % tokens.length] : undefined);
			for (let i = 0; i < job.warmup; i++) await once(pick());
			for (let i = 0; i < job.requests; i++) {
				const token = pick();
				const start = performance.now();
				await once(token);
				samples.push(performance.now() - start);
			}
		}),
	);
	console.log(JSON.stringify({ samples }));
	process.exit(0);
}
