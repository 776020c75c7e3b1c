// Spec "Frames" and the violations of "Closing": every frame goes through parseClientFrame with the granted
// features; binary, unparseable, invalid and un-negotiated frames get error then 1008, an oversized one 1009;
// remembered request ids.
import { afterEach, describe, expect, test } from "bun:test";
import { MAX_FRAME_BYTES } from "@chopin/agent-link";
import { JSON_TOO_DEEP_MESSAGE } from "@chopin/agent-link/json-depth";
import { AgentFixture } from "../testing/agent-fixture";
import type { AgentSocket } from "../testing/agent-socket";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

async function attached(): Promise<{ f: AgentFixture; socket: AgentSocket; documentId: string }> {
	f = await AgentFixture.start();
	const doc = await f.createDocument();
	await f.signIn("alice");
	// Asks for no feature: what a feature allows is then malformed, whatever this server implements.
	const { socket } = await f.attach("alice", doc.id);
	return { f, socket, documentId: doc.id };
}

async function violation(socket: AgentSocket) {
	const error = await socket.expect("error");
	return { error, closed: await socket.closed };
}

describe("frames", () => {
	test("a binary frame is answered malformed-message and closed 1008, before attach too", async () => {
		f = await AgentFixture.start();
		const early = await f.connect("alice");
		early.sendBinary(new TextEncoder().encode('{"type":"attach","version":1,"document":"x"}'));
		expect(await violation(early)).toEqual({
			error: {
				type: "error",
				code: "malformed-message",
				message: "Binary frames are refused: send each message as JSON in one text frame.",
			},
			closed: { code: 1008, reason: "malformed-message" },
		});
		await f.close();
		const { socket } = await attached();
		socket.sendBinary(new Uint8Array([1, 2, 3]));
		expect((await violation(socket)).closed.code).toBe(1008);
	});

	test("unparseable, invalid and unknown messages are malformed-message, then 1008", async () => {
		for (const frame of [
			"{not json",
			"[1,2]",
			'{"no":"type"}',
			'{"type":"hello"}',
			JSON.stringify({ type: "turn-end", session: "s", turn: "t", status: "done" }),
			JSON.stringify({ type: "detach", extra: true }),
			JSON.stringify({ type: "start-failed", session: "s", message: "x".repeat(4001) }),
		]) {
			const { socket } = await attached();
			socket.send(frame);
			const { error, closed } = await violation(socket);
			expect(error.code).toBe("malformed-message");
			expect(closed).toEqual({ code: 1008, reason: "malformed-message" });
			await f!.close();
			f = undefined;
		}
	});

	test("messages of features this server did not grant are malformed-message (1008)", async () => {
		for (const message of [
			{ type: "resume", sessions: [] },
			{ type: "input-received", request: "r1" },
			{ type: "capabilities", catalog: {} },
			// A delta card on a link without run-stage-deltas: run-deltas.test.ts.
		]) {
			const { socket } = await attached();
			socket.send(message);
			const { error, closed } = await violation(socket);
			expect(error.code).toBe("malformed-message");
			expect(error.message).toContain("feature");
			expect(closed.code).toBe(1008);
			await f!.close();
			f = undefined;
		}
	});

	test("a tool-result nested 9,000 arrays deep is malformed-message and 1008, not a 1011", async () => {
		const { f, socket, documentId } = await attached();
		const turn = await f.chatTurn(socket, documentId, "bob");
		const deep = "[".repeat(9000) + "]".repeat(9000);
		socket.send(
			`{"type":"part","session":${JSON.stringify(turn.session)},"turn":${JSON.stringify(turn.turn)},` +
				`"part":{"type":"tool-result","toolCallId":"c1","toolName":"run_tests","result":${deep}}}`,
		);
		expect(await violation(socket)).toEqual({
			error: { type: "error", code: "malformed-message", message: JSON_TOO_DEEP_MESSAGE },
			closed: { code: 1008, reason: "malformed-message" },
		});
	});

	test("a frame of 2 MiB + 1 byte gets error message-too-large, then 1009; one of exactly 2 MiB is read", async () => {
		const { f, socket, documentId } = await attached();
		const exact = JSON.stringify({
			type: "part",
			session: "s",
			turn: "t",
			part: { type: "text-delta", id: "x", delta: "" },
		});
		const fill = "a".repeat(MAX_FRAME_BYTES - exact.length);
		const atLimit = JSON.stringify({
			type: "part",
			session: "s",
			turn: "t",
			part: { type: "text-delta", id: "x", delta: fill },
		});
		expect(Buffer.byteLength(atLimit)).toBe(MAX_FRAME_BYTES);
		socket.send(atLimit);
		// Read and ignored (no such session): the link is still open.
		await f.sync(socket);
		socket.send(`${atLimit} `);
		expect(await socket.expect("error")).toMatchObject({ type: "error", code: "message-too-large" });
		expect((await socket.closed).code).toBe(1009);
		await f.until(() => f.ctx.planner.connections() === 0, "the link to go");
		// A drop: the account keeps the document for the grace period.
		expect(f.ctx.planner.status(documentId).state).toBe("grace");
	});
});

describe("remembered request ids", () => {
	test("an input-request id sent again while open is a protocol violation", async () => {
		const { f, socket, documentId } = await attached();
		const turn = await f.chatTurn(socket, documentId, "bob");
		const ask = {
			type: "input-request",
			request: "q-1",
			session: turn.session,
			input: { method: "confirm", title: "Ship it?", message: "" },
		};
		socket.send(ask);
		await f.until(async () => (await f.ctx.domain.decisions.list(documentId)).length === 1, "the Decision");
		socket.send(ask);
		expect(await violation(socket)).toEqual({
			error: {
				type: "error",
				code: "protocol",
				message: "The request id q-1 was used before on this connection.",
			},
			closed: { code: 1008, reason: "protocol" },
		});
	});

	test("the last 1,024 ids received are remembered after they settle; older ones may come again", async () => {
		const { f, socket, documentId } = await attached();
		const job = f.ctx.planner.runJob(documentId, { prompt: "summarise" });
		const start = await socket.expect("start");
		expect(start.mode).toBe("isolated");
		socket.send({ type: "started", session: start.session });
		await socket.expect("turn");
		const ask = (request: string) => ({
			type: "input-request",
			request,
			session: start.session,
			input: { method: "input", title: "Name?" },
		});
		// Questions in an isolated session fail at once, so every one of these settles.
		for (let i = 0; i <= 1024; i += 64)
			socket.sendBatch(Array.from({ length: Math.min(64, 1025 - i) }, (_, j) => ask(`q${i + j}`)));
		for (let i = 0; i <= 1024; i++) {
			expect(await socket.expect("input-result")).toMatchObject({ request: `q${i}`, status: "failed" });
		}
		// q0 is no longer among the last 1,024: it may be used again.
		socket.send(ask("q0"));
		expect(await socket.expect("input-result")).toMatchObject({ request: "q0", status: "failed" });
		// q1024 still is.
		socket.send(ask("q1024"));
		expect((await violation(socket)).error.code).toBe("protocol");
		expect((await job).status).toBe("failed");
	});
});
