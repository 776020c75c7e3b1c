// /ws rechecks read access every 5 minutes (GitHub mode, the emulator's permissions changed underneath): a page
// that lost access is closed with 4403 and gets no more events; one that kept it stays open.
import { afterEach, expect, test } from "bun:test";
import WebSocket from "ws";
import { AgentFixture } from "../testing/agent-fixture";
import { LIVE_CLOSE, LIVE_PING_MS, LIVE_RECHECK_MS } from "./socket";

let f: AgentFixture | undefined;
const sockets: WebSocket[] = [];
afterEach(async () => {
	for (const ws of sockets.splice(0)) ws.terminate();
	await f?.close();
	f = undefined;
});

async function open(fixture: AgentFixture, login: string, documentId: string) {
	const jar = await fixture.signIn(login);
	const ws = new WebSocket(`${fixture.server.url.replace("http:", "ws:")}/ws?document=${documentId}`, {
		headers: { origin: fixture.publicUrl, cookie: jar.header() },
	});
	sockets.push(ws);
	const closed = new Promise<number>((resolve) => ws.on("close", (code) => resolve(code)));
	await new Promise<void>((resolve, reject) => {
		ws.once("message", () => resolve());
		ws.once("error", reject);
	});
	return { ws, closed };
}

/** A round trip on each socket: the server has read every pong sent before it. */
const heard = (ws: WebSocket) =>
	ws.readyState === WebSocket.OPEN
		? new Promise<void>((resolve) => {
				ws.once("pong", () => resolve());
				ws.ping();
			})
		: Promise.resolve();

test("a page whose person lost read access is closed 4403 at the next recheck; the others stay", async () => {
	f = await AgentFixture.start({ mode: "github" });
	const doc = await f.createDocument();
	const reader = await open(f, f.cast.reader, doc.id);
	const writer = await open(f, f.cast.writer, doc.id);
	f.gh!.removePermission(f.cast.repository, f.cast.reader);
	// Time moves a ping interval at a time, each page answering its ping, up to the recheck.
	for (let t = 0; t < LIVE_RECHECK_MS; t += LIVE_PING_MS) {
		await f.clock.advance(LIVE_PING_MS);
		await Promise.all([heard(reader.ws), heard(writer.ws)]);
	}
	expect(await reader.closed).toBe(LIVE_CLOSE.forbidden);
	expect(writer.ws.readyState).toBe(WebSocket.OPEN);
});
