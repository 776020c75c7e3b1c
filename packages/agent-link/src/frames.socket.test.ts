/**
 * The parse entries against real sockets: what Bun.serve and the ws package actually hand over
 * (strings, Buffers with isBinary), binary frames, and the 2 MiB limit as a server enforces it.
 */
import { afterEach, describe, expect, test } from "bun:test";
import WebSocket from "ws";
import { CLIENT_MALFORMED_CLOSE } from "./closing";
import { encodeServerMessage } from "./encode";
import { MAX_FRAME_BYTES } from "./limits";
import { type ParseError, parseClientFrame, parseServerFrame, toWireError } from "./parse";
import { SUBPROTOCOL } from "./protocol";
import type { ClientMessage } from "./schemas/client-messages";
import type { ServerMessage } from "./schemas/server-messages";
import { clientMessages, serverMessages } from "./testing/examples";

type Received = { ok: true; message: ClientMessage } | { ok: false; error: ParseError };

/** A loopback server that parses every frame as the Chopin server must, and answers refusals per spec. */
function startServer(onOpen?: (send: (data: string | Uint8Array) => void) => void) {
	const received: Received[] = [];
	const closes: { code: number; reason: string }[] = [];
	let notify: () => void = () => {};
	const server = Bun.serve({
		port: 0,
		hostname: "127.0.0.1",
		fetch(req, srv) {
			if (srv.upgrade(req, { headers: { "Sec-WebSocket-Protocol": SUBPROTOCOL } })) return;
			return new Response("upgrade required", { status: 426 });
		},
		websocket: {
			maxPayloadLength: MAX_FRAME_BYTES,
			open(ws) {
				onOpen?.((data) => ws.send(data));
			},
			message(ws, data) {
				const result = parseClientFrame(data);
				received.push(result);
				if (!result.ok) {
					const wire = toWireError(result.error);
					ws.send(encodeServerMessage({ type: "error", code: wire.code, message: result.error.message }));
					ws.close(wire.close, wire.code);
				}
				notify();
			},
			close(_ws, code, reason) {
				closes.push({ code, reason });
				notify();
			},
		},
	});
	const until = (done: () => boolean) =>
		new Promise<void>((resolve) => {
			if (done()) return resolve();
			notify = () => done() && resolve();
		});
	return { server, received, closes, until, url: `ws://127.0.0.1:${server.port}` };
}

/** A frame of exactly bytes bytes of UTF-8 (the delta is mostly 3-byte characters). */
function frameOf(bytes: number): string {
	const empty = JSON.stringify({ ...clientMessages.part, part: { type: "text-delta", id: "x", delta: "" } });
	const fill = bytes - Buffer.byteLength(empty);
	const delta = "€".repeat(Math.floor(fill / 3)) + "a".repeat(fill % 3);
	return JSON.stringify({ ...clientMessages.part, part: { type: "text-delta", id: "x", delta } });
}

let cleanup: (() => void)[] = [];
afterEach(() => {
	for (const fn of cleanup.reverse()) fn();
	cleanup = [];
});

function openBun(url: string) {
	const socket = new globalThis.WebSocket(url, {
		protocols: [SUBPROTOCOL],
		perMessageDeflate: false,
	} as never);
	cleanup.push(() => socket.close());
	const messages: ReturnType<typeof parseServerFrame>[] = [];
	const closed = new Promise<{ code: number; reason: string }>((resolve) =>
		socket.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason })),
	);
	socket.addEventListener("message", (event) => messages.push(parseServerFrame(event.data)));
	const opened = new Promise<void>((resolve) => socket.addEventListener("open", () => resolve()));
	return { socket, messages, closed, opened };
}

describe("frames over a real socket", () => {
	test("Bun hands text frames over as strings and binary frames as Buffers; binary is refused with 1008", async () => {
		const fixture = startServer();
		cleanup.push(() => fixture.server.stop(true));
		const client = openBun(fixture.url);
		await client.opened;
		client.socket.send(JSON.stringify(clientMessages.attach));
		await fixture.until(() => fixture.received.length === 1);
		expect(fixture.received[0]).toEqual({ ok: true, message: clientMessages.attach });

		client.socket.send(new TextEncoder().encode(JSON.stringify(clientMessages.detach)));
		const closed = await client.closed;
		expect(fixture.received[1]?.ok === false && fixture.received[1].error.code).toBe("binary-frame");
		expect(closed).toEqual({ code: 1008, reason: "malformed-message" });
		expect(client.messages).toEqual([
			{
				ok: true,
				message: {
					type: "error",
					code: "malformed-message",
					message: "Binary frames are refused: send each message as JSON in one text frame.",
				},
			},
		]);
	});

	test("a frame of exactly 2 MiB of multibyte text arrives and parses", async () => {
		const fixture = startServer();
		cleanup.push(() => fixture.server.stop(true));
		const client = openBun(fixture.url);
		await client.opened;
		const frame = frameOf(MAX_FRAME_BYTES);
		expect(Buffer.byteLength(frame)).toBe(MAX_FRAME_BYTES);
		expect(frame.length).toBeLessThan(MAX_FRAME_BYTES);
		client.socket.send(frame);
		await fixture.until(() => fixture.received.length === 1);
		expect(fixture.received[0]?.ok).toBe(true);
	});

	test("one byte more is closed with 1009 by a server whose maxPayloadLength is the spec's limit", async () => {
		const fixture = startServer();
		cleanup.push(() => fixture.server.stop(true));
		const client = openBun(fixture.url);
		await client.opened;
		client.socket.send(frameOf(MAX_FRAME_BYTES + 1));
		const closed = await client.closed;
		expect(closed.code).toBe(1009);
		expect(fixture.received).toEqual([]);
	});

	test("the ws package hands text frames over as Buffers: isBinary tells them apart", async () => {
		const fixture = startServer((send) => {
			send(encodeServerMessage(serverMessages.start));
			send(new TextEncoder().encode(encodeServerMessage(serverMessages.destroy)));
		});
		cleanup.push(() => fixture.server.stop(true));
		const socket = new WebSocket(fixture.url, [SUBPROTOCOL]);
		cleanup.push(() => socket.terminate());
		const results: ReturnType<typeof parseServerFrame>[] = [];
		socket.on("message", (data, isBinary) => {
			expect(Buffer.isBuffer(data)).toBe(true);
			const result = parseServerFrame(data as Buffer, { isBinary });
			results.push(result);
			// A client that cannot parse a frame closes with 4400 malformed-message.
			if (!result.ok) socket.close(CLIENT_MALFORMED_CLOSE.code, CLIENT_MALFORMED_CLOSE.reason);
		});
		await fixture.until(() => fixture.closes.length === 1);
		expect(results).toEqual([
			{ ok: true, message: serverMessages.start as ServerMessage },
			{
				ok: false,
				error: {
					code: "binary-frame",
					message: "Binary frames are refused: send each message as JSON in one text frame.",
				},
			},
		]);
		expect(fixture.closes).toEqual([{ code: 4400, reason: "malformed-message" }]);
	});
});
