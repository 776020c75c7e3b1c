// What a client sees for frames at the wire's edges, through a hand-written client on a real server (docs/errors.md
// § Agent endpoint): frames of 2 to 4 MiB are read and answered error message-too-large, then 1009; past 4 MiB
// (Bun's maxPayloadLength) and for frames that break RFC 6455, Bun closes the socket itself, with no error first.
import { afterEach, describe, expect, test } from "bun:test";
import { MAX_FRAME_BYTES } from "@chopin/agent-link";
import { AgentFixture } from "../testing/agent-fixture";
import type { AgentSocket } from "../testing/agent-socket";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

async function attached(): Promise<AgentSocket> {
	f = await AgentFixture.start();
	documentId = (await f.createDocument()).id;
	await f.signIn("alice");
	return (await f.attach("alice", documentId)).socket;
}
let documentId = "";

/** A text-delta part of exactly `bytes` bytes of JSON. */
function partOf(bytes: number): string {
	const empty = JSON.stringify({
		type: "part",
		session: "s",
		turn: "t",
		part: { type: "text-delta", id: "x", delta: "" },
	});
	return empty.replace('"delta":""', `"delta":"${"a".repeat(bytes - empty.length)}"`);
}

describe("frame sizes", () => {
	test("3 MiB (over the 2 MiB limit, within Bun's 4 MiB) is answered error message-too-large, then 1009", async () => {
		const socket = await attached();
		const before = socket.received.length;
		socket.send(partOf(3 * 1024 * 1024));
		expect(await socket.expect("error")).toMatchObject({ code: "message-too-large" });
		expect(await socket.closed).toEqual({ code: 1009, reason: "message-too-large" });
		expect(socket.received.length).toBe(before + 1);
	});

	test("one byte over 4 MiB is closed 1009 by Bun itself, with no error message", async () => {
		const socket = await attached();
		const before = socket.received.length;
		socket.send(partOf(2 * MAX_FRAME_BYTES + 1));
		expect((await socket.closed).code).toBe(1009);
		expect(socket.received.length).toBe(before);
		// A drop like any other: the account keeps the document for the grace period.
		await f!.until(() => f!.ctx.planner.connections() === 0, "the link to go");
		expect(f!.ctx.planner.status(documentId).state).toBe("grace");
	});
});

describe("frames that break the WebSocket protocol are closed by Bun, with no error message", () => {
	const cases: [string, (socket: AgentSocket) => void, number][] = [
		["a text frame that is not UTF-8", (s) => s.sendFrame(0x1, Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), 1007],
		["an unmasked frame", (s) => s.write(Buffer.from([0x81, 0x02, 0x7b, 0x7d])), 1002],
		["a reserved opcode", (s) => s.sendFrame(0x3, Buffer.from("{}")), 1002],
		["a continuation with nothing to continue", (s) => s.sendFrame(0x0, Buffer.from("{}")), 1002],
	];
	for (const [what, send, code] of cases) {
		test(`${what}: ${code}`, async () => {
			const socket = await attached();
			const before = socket.received.length;
			send(socket);
			expect((await socket.closed).code).toBe(code);
			expect(socket.received.length).toBe(before);
		});
	}
});
