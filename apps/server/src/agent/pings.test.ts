// Spec "Pings": the server's own pings every interval from the moment a link opens, none while frames are
// queued, and the drop (1001 unresponsive, nothing sent first) after the timeout unheard or the longest
// silence, a shrinking queue putting off only the first; any frame from the client counts.
import { afterEach, describe, expect, test } from "bun:test";
import { AgentFixture } from "../testing/agent-fixture";
import type { AgentSocket } from "../testing/agent-socket";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

/** Tests that queue megabytes of frames get room on a busy machine. */
const HEAVY_MS = 60_000;

const LINES = Array.from(
	{ length: 600 },
	(_, i) => `Line ${i} of a long plan, padded to read like prose in a real document.`,
);

/**
 * A Planner in a turn on a large document, whose read_plan results are about 16 KB each. The turn
 * is a background job's (an isolated session), so its hundreds of calls make no Chat rows.
 */
async function planner(env: Record<string, string>) {
	f = await AgentFixture.start({ env });
	const doc = await f.createDocument({ source: `# Plan\n\n${LINES.join("\n\n")}\n` });
	await f.signIn("alice");
	const { socket } = await f.attach("alice", doc.id);
	void f.ctx.planner.runJob(doc.id, { prompt: "Read the plan." });
	const start = await socket.expect("start");
	socket.send({ type: "started", session: start.session });
	const turn = await socket.expect("turn");
	return { f, socket, turn, documentId: doc.id };
}

/** Has the server queue `calls` read_plan results for a client that reads nothing, until Bun holds some. */
async function fillQueue(
	f: AgentFixture,
	socket: AgentSocket,
	turn: { session: string; turn: string },
	calls: number,
) {
	const read = f.ctx.planner.linkStats()[0]!.framesReceived;
	socket.pause();
	const prefix = crypto.randomUUID();
	for (let i = 0; i < calls; i += 50) {
		socket.sendBatch(
			Array.from({ length: Math.min(50, calls - i) }, (_, j) => ({
				type: "host-tool-call",
				session: turn.session,
				turn: turn.turn,
				toolCallId: `${prefix}-${i + j}`,
				toolName: "read_plan",
				input: JSON.stringify({ offset: 1 + ((i + j) % 300) }),
			})),
		);
	}
	// Every call read before the clock moves (reading one is hearing from the client), and frames queued.
	await f.until(() => f.ctx.planner.linkStats()[0]!.framesReceived === read + calls, "the calls to be read");
	const ws = f.serverSocket();
	await f.until(() => ws.getBufferedAmount() > 1_000_000, "frames to queue up");
}

describe("pings", () => {
	test("Bun's own idle timeout and pings are off: the server runs its own", async () => {
		f = await AgentFixture.start();
		expect(f.ctx.sockets.settings).toMatchObject({
			idleTimeout: 0,
			sendPings: false,
			// Twice the 2 MiB limit: the link answers a frame over it with error message-too-large before 1009.
			maxPayloadLength: 2 * 2_097_152,
		});
	});

	test("a ping every interval from the moment the link opens; a client answering them stays open", async () => {
		f = await AgentFixture.start({
			env: {
				AGENT_CONNECTION_PING_MS: "15000",
				AGENT_CONNECTION_TIMEOUT_MS: "120000",
				AGENT_CONNECTION_MAX_SILENCE_MS: "900000",
			},
		});
		const doc = await f.createDocument();
		await f.signIn("alice");
		const socket = await f.connect("alice");
		await f.clock.advance(14_999);
		expect(socket.pings).toBe(0);
		await f.clock.advance(1);
		await f.until(() => socket.pings === 1, "the first ping");
		socket.send({ type: "attach", version: 1, document: doc.id });
		await socket.expect("attached");
		// Ten more intervals, well past the 120-second timeout: each pong counts.
		for (let i = 2; i <= 11; i++) {
			await f.clock.advance(15_000);
			await f.until(() => socket.pings === i, `ping ${i}`);
			await f.sync(socket);
		}
		expect(f.ctx.planner.status(doc.id).state).toBe("attached");
	});

	test("unheard for the timeout: closed 1001 unresponsive, with no error or refused first, and the grace period runs", async () => {
		f = await AgentFixture.start({
			env: {
				AGENT_CONNECTION_PING_MS: "15000",
				AGENT_CONNECTION_TIMEOUT_MS: "120000",
				AGENT_CONNECTION_MAX_SILENCE_MS: "900000",
			},
		});
		const doc = await f.createDocument();
		await f.signIn("alice");
		const { socket } = await f.attach("alice", doc.id);
		socket.autoPong = false;
		await f.clock.advance(119_999);
		expect(f.ctx.planner.connections()).toBe(1);
		await f.clock.advance(1);
		expect(await socket.closed).toEqual({ code: 1001, reason: "unresponsive" });
		expect(socket.received.map((m) => m.type)).toEqual(["attached"]);
		expect(f.ctx.planner.status(doc.id)).toMatchObject({ state: "grace", login: "alice" });
	});

	test("any frame from the client counts: its own pings keep a link that never pongs", async () => {
		f = await AgentFixture.start({
			env: {
				AGENT_CONNECTION_PING_MS: "15000",
				AGENT_CONNECTION_TIMEOUT_MS: "120000",
				AGENT_CONNECTION_MAX_SILENCE_MS: "900000",
			},
		});
		const doc = await f.createDocument();
		await f.signIn("alice");
		const { socket } = await f.attach("alice", doc.id);
		socket.autoPong = false;
		for (let i = 1; i <= 4; i++) {
			await f.clock.advance(100_000);
			socket.ping();
			// The server answers a client's ping itself: once the pong is back, the ping was read.
			await f.until(() => socket.pongs === i, `pong ${i}`);
		}
		expect(f.ctx.planner.connections()).toBe(1);
		await f.clock.advance(120_000);
		expect((await socket.closed).code).toBe(1001);
	});

	test(
		"no ping while frames are queued; once the client has read them all, the next interval pings",
		async () => {
			const { f, socket, turn } = await planner({
				AGENT_CONNECTION_PING_MS: "1000",
				AGENT_CONNECTION_TIMEOUT_MS: "5000",
				AGENT_CONNECTION_MAX_SILENCE_MS: "3600000",
			});
			await fillQueue(f, socket, turn, 700);
			await f.clock.advance(3000);
			socket.resume();
			for (let i = 0; i < 700; i++) await socket.nextOf("host-tool-result");
			await f.until(() => f.serverSocket().getBufferedAmount() === 0, "the queue to drain");
			expect(socket.pings).toBe(0);
			await f.clock.advance(1000);
			await f.until(() => socket.pings === 1, "a ping once the queue is empty");
		},
		HEAVY_MS,
	);

	test(
		"a client that stops reading entirely keeps a queue that never shrinks: dropped after the timeout",
		async () => {
			const { f, socket, turn, documentId } = await planner({
				AGENT_CONNECTION_PING_MS: "1000",
				AGENT_CONNECTION_TIMEOUT_MS: "5000",
				AGENT_CONNECTION_MAX_SILENCE_MS: "3600000",
			});
			await fillQueue(f, socket, turn, 700);
			await f.clock.advance(4999);
			expect(f.ctx.planner.connections()).toBe(1);
			await f.clock.advance(1);
			await f.until(() => f.ctx.planner.connections() === 0, "the drop");
			expect(f.server.logs.find((l) => l.msg === "agent link closed")).toMatchObject({
				code: 1001,
				reason: "unresponsive",
			});
			expect(f.ctx.planner.status(documentId).state).toBe("grace");
		},
		HEAVY_MS,
	);

	test(
		"a shrinking queue puts off the timeout, but not the longest silence",
		async () => {
			const { f, socket, turn } = await planner({
				AGENT_CONNECTION_PING_MS: "1000",
				AGENT_CONNECTION_TIMEOUT_MS: "3000",
				AGENT_CONNECTION_MAX_SILENCE_MS: "4000",
			});
			await fillQueue(f, socket, turn, 700);
			const ws = f.serverSocket();
			await f.clock.advance(2000);
			// The client reads some of it: the queue gets shorter, though the client says nothing.
			const before = ws.getBufferedAmount();
			socket.resume();
			await f.until(() => ws.getBufferedAmount() < before, "the queue to shrink");
			socket.pause();
			socket.autoPong = false;
			await f.clock.advance(1500);
			// Past the 3-second timeout since the client was last heard: still open, the queue shrank at 2 s.
			expect(f.ctx.planner.connections()).toBe(1);
			await f.clock.advance(500);
			// 4 seconds with no frame at all: dropped, however the queue drains.
			await f.until(() => f.ctx.planner.connections() === 0, "the drop");
			expect(f.server.logs.find((l) => l.msg === "agent link closed")).toMatchObject({
				code: 1001,
				reason: "unresponsive",
			});
		},
		HEAVY_MS,
	);
});
