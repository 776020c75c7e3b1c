/** A turn's own rules: tool call ids, declared tools, ended turns, long text, and a link that drops under it. */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { MAX_FRAME_BYTES } from "../limits";
import { TOKEN } from "./contract/harness";
import { ScriptedServer } from "./contract/scripted-server";
import { attachedLink, recorder, sync } from "./testing";
import type { Turn } from "./turn";

let server: ScriptedServer;
beforeEach(() => {
	server = new ScriptedServer(TOKEN);
});
afterEach(() => server.stop());

/** A link with session s1 and turn t1 running; the turn handler waits until released. */
async function running(mode: "planner" | "isolated" = "planner") {
	const record = recorder();
	let release: () => void = () => {};
	record.behave.turn = () => new Promise<void>((resolve) => (release = resolve));
	const setup = await attachedLink(server, record);
	const { connection } = setup;
	connection.send({ type: "start", session: "s1", mode });
	await connection.expect("started");
	connection.send({ type: "turn", session: "s1", turn: "t1", prompt: "go", tools: [{ name: "read_plan" }] });
	await sync(connection);
	return { ...setup, record, turn: record.turns[0] as Turn, release: () => release() };
}

test("a tool-result needs its own tool-call first, and a toolCallId is used once per turn", async () => {
	const { turn, connection } = await running();
	expect(() => turn.emit({ type: "tool-result", toolCallId: "x", toolName: "run", result: 1 })).toThrow(
		expect.objectContaining({ code: "tool-not-called" }),
	);
	turn.toolCall("run", {}, "call-1");
	expect(() => turn.toolCall("run", {}, "call-1")).toThrow(
		expect.objectContaining({ code: "tool-call-id-repeated" }),
	);
	expect(await connection.expect("part")).toMatchObject({
		part: { type: "tool-call", toolCallId: "call-1" },
	});
});

test("own tools may not repeat a host tool's name, and an isolated session declares none", async () => {
	const { turn } = await running();
	expect(() => turn.declareTools(["read_plan"])).toThrow(
		expect.objectContaining({ code: "tool-name-taken" }),
	);
	server.stop();
	server = new ScriptedServer(TOKEN);
	const isolated = await running("isolated");
	expect(() => isolated.turn.declareTools(["mine"])).toThrow(
		"An isolated session may declare no tools of its own.",
	);
});

test("after end() nothing more can be streamed, and a waiting host call settles failed", async () => {
	const { turn, connection } = await running();
	const call = turn.callHostTool("read_plan");
	await connection.expect("host-tool-call");
	await turn.end("failed", "x".repeat(5000));
	expect(await call).toEqual({ output: { error: "The turn has ended." }, isError: true });
	const end = await connection.expect("turn-end");
	expect(end.message?.length).toBe(4000);
	expect(() => turn.text("late")).toThrow(expect.objectContaining({ code: "turn-ended" }));
	expect(() => turn.callHostTool("read_plan")).toThrow(expect.objectContaining({ code: "turn-ended" }));
});

test("text longer than a frame goes as several deltas, never splitting a surrogate pair", async () => {
	const { turn, connection } = await running();
	const text = `${"a".repeat(256 * 1024 - 1)}😀${"€".repeat(300_000)}`;
	await turn.text(text);
	const start = await connection.expect("part");
	expect(start.part).toEqual({ type: "text-start", id: "text-1" });
	let received = "";
	for (;;) {
		const { part } = await connection.expect("part");
		if (part.type === "text-end") break;
		expect(part.type).toBe("text-delta");
		received += (part as { delta: string }).delta;
	}
	expect(received).toBe(text);
	const sizes = connection.frames.flatMap((frame) => ("bytes" in frame ? [frame.bytes] : []));
	expect(Math.max(...sizes)).toBeLessThanOrEqual(MAX_FRAME_BYTES);
});

test("a resumable link that drops abandons its turns without a turn-end, fails their host calls and keeps the session", async () => {
	const { turn, connection, link, record } = await running();
	const call = turn.callHostTool("read_plan");
	await connection.expect("host-tool-call");
	connection.terminate();
	const closed = await link.closed;
	expect(await call).toEqual({ output: { error: "The link dropped." }, isError: true });
	expect(turn.signal.aborted).toBe(true);
	expect(turn.ended).toBe(true);
	const session = record.sessions[0]!;
	expect(session.ended).toBe(false);
	expect(session.connected).toBe(false);
	expect(closed.resume?.sessions).toEqual([{ session: "s1", requests: [] }]);
	expect(record.destroyed).toEqual([]);
});
