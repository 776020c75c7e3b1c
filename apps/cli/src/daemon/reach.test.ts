import { afterEach, describe, expect, test } from "bun:test";
import { ManualClock, systemClock } from "@chopin/agent-link/clock";
import { closedOrigin } from "../testing/closed-port";
import { httpReach, PING_PATH, REACH_TIMEOUT_MS } from "./reach";

const servers: { stop(force?: boolean): unknown }[] = [];
afterEach(async () => {
	for (const s of servers.splice(0)) await s.stop(true);
});

function serve(answer: (req: Request) => Response | Promise<Response>) {
	const seen: string[] = [];
	const server = Bun.serve({
		port: 0,
		hostname: "127.0.0.1",
		fetch: (req) => {
			seen.push(`${req.method} ${new URL(req.url).pathname} ${req.headers.get("chopin-client")}`);
			return answer(req);
		},
	});
	servers.push(server);
	return { origin: `http://127.0.0.1:${server.port}`, seen };
}

const reachOf = (server: string, clock = systemClock()) =>
	httpReach({ server, fetch, clock, client: "chopin/0.1.0 (linux-x64; source)" });

describe("reaching the server while the control channel is down", () => {
	test("any HTTP answer below 500 is up; the request is one GET of the ping path naming the client", async () => {
		const ok = serve(() => new Response(null, { status: 204 }));
		expect(await reachOf(ok.origin)(new AbortController().signal)).toBe("up");
		expect(ok.seen).toEqual([`GET ${PING_PATH} chopin/0.1.0 (linux-x64; source)`]);
		// A server from before the ping answers 404: it answers, so it is up.
		const old = serve(() => new Response("nothing here", { status: 404 }));
		expect(await reachOf(old.origin)(new AbortController().signal)).toBe("up");
	});

	test("503 with Retry-After is the server asking to wait; a proxy's 502 and a refused connection are down", async () => {
		const busy = serve(() => new Response(null, { status: 503, headers: { "retry-after": "3" } }));
		expect(await reachOf(busy.origin)(new AbortController().signal)).toEqual({ busyForMs: 3_000 });
		const proxy = serve(() => new Response("bad gateway", { status: 502 }));
		expect(await reachOf(proxy.origin)(new AbortController().signal)).toBe("down");
		expect(await reachOf(await closedOrigin())(new AbortController().signal)).toBe("down");
	});

	test("no answer within the timeout (on the injected clock) is down", async () => {
		const hanging = serve(() => new Promise<Response>(() => {}));
		const clock = new ManualClock();
		const answer = reachOf(hanging.origin, clock)(new AbortController().signal);
		while (hanging.seen.length === 0) await Bun.sleep(2);
		await clock.advance(REACH_TIMEOUT_MS);
		expect(await answer).toBe("down");
	});
});
