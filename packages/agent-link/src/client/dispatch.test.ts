/**
 * The client's own answers: the 10-second ones on its clock (start, abort, steer), stop answers
 * that stay welcome late, forks, and messages for sessions it does not hold.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { TOKEN } from "./contract/harness";
import { ScriptedServer } from "./contract/scripted-server";
import { attachedLink, recorder, sync } from "./testing";

let server: ScriptedServer;
beforeEach(() => {
	server = new ScriptedServer(TOKEN);
});
afterEach(() => server.stop());

function never(): Promise<never> {
	return new Promise(() => {});
}

test("a start not answered within 10 seconds gets start-failed, and the late answer sends nothing", async () => {
	const record = recorder();
	let finish: () => void = () => {};
	record.behave.start = () => new Promise<void>((resolve) => (finish = resolve));
	const { connection, clock } = await attachedLink(server, record);
	connection.send({ type: "start", session: "s1", mode: "planner" });
	await sync(connection);
	await clock.advance(9_999);
	await sync(connection);
	await clock.advance(1);
	expect(await connection.expect("start-failed")).toEqual({
		type: "start-failed",
		session: "s1",
		message: "The backend did not start the session within 10 seconds.",
	});
	finish();
	await sync(connection);
});

test("a turn not ended within 10 seconds of its abort is ended aborted by the client; the backend's own end() then sends nothing", async () => {
	const record = recorder();
	record.behave.turn = () => never();
	const { connection, clock } = await attachedLink(server, record);
	connection.send({ type: "start", session: "s1", mode: "planner" });
	await connection.expect("started");
	connection.send({ type: "turn", session: "s1", turn: "t1", prompt: "go", tools: [] });
	connection.send({ type: "abort", session: "s1", turn: "t1" });
	await sync(connection);
	await clock.advance(10_000);
	expect(await connection.expect("turn-end")).toEqual({
		type: "turn-end",
		session: "s1",
		turn: "t1",
		status: "aborted",
		message: "The turn did not end within 10 seconds of its abort.",
	});
	const turn = record.turns[0]!;
	expect(turn.signal.aborted).toBe(true);
	expect(turn.ended).toBe(true);
	await turn.end("finished");
	expect(() => turn.end()).toThrow("This turn has already ended.");
	await sync(connection);
});

test("a steer not answered within 10 seconds is refused, and the late answer sends nothing", async () => {
	const record = recorder();
	record.behave.turn = () => never();
	let answer: (value: { ok: boolean }) => void = () => {};
	record.behave.steer = () => new Promise((resolve) => (answer = resolve));
	const { connection, clock } = await attachedLink(server, record);
	expect(connection.requested).toContain("steer-turn");
	connection.send({ type: "start", session: "s1", mode: "planner" });
	await connection.expect("started");
	connection.send({ type: "turn", session: "s1", turn: "t1", prompt: "go", tools: [] });
	connection.send({ type: "steer", request: "st1", session: "s1", turn: "t1", prompt: "@bo: hi" });
	await sync(connection);
	await clock.advance(10_000);
	expect(await connection.expect("control-result")).toEqual({
		type: "control-result",
		request: "st1",
		ok: false,
		message: "The turn did not take the message within 10 seconds.",
	});
	answer({ ok: true });
	await sync(connection);
});

test("a stop answered after 10 seconds is still answered", async () => {
	const record = recorder();
	let answer: (value: { ok: boolean }) => void = () => {};
	record.behave.control = () => new Promise((resolve) => (answer = resolve));
	const { connection, clock } = await attachedLink(server, record);
	connection.send({ type: "start", session: "s1", mode: "planner" });
	await connection.expect("started");
	connection.send({ type: "stop", request: "c1", session: "s1", run: "r1" });
	await sync(connection);
	await clock.advance(60_000);
	answer({ ok: true });
	expect(await connection.expect("control-result")).toEqual({
		type: "control-result",
		request: "c1",
		ok: true,
	});
});

test("fork, with a fork handler, starts a session that knows where it branched from", async () => {
	const record = recorder();
	const forks: { id: string; from: unknown }[] = [];
	record.handlers.fork = (session) => {
		forks.push({ id: session.id, from: session.from });
	};
	const { connection } = await attachedLink(server, record);
	expect(connection.requested).toContain("session-forks");
	connection.send({ type: "fork", session: "s2", mode: "planner", from: { session: "s1", turn: "t3" } });
	expect(await connection.expect("started")).toEqual({ type: "started", session: "s2" });
	expect(forks).toEqual([{ id: "s2", from: { session: "s1", turn: "t3" } }]);
});

test("a start for a session already held is refused, and destroy of an unknown session is ignored", async () => {
	const record = recorder();
	const { connection } = await attachedLink(server, record);
	connection.send({ type: "start", session: "s1", mode: "planner" });
	await connection.expect("started");
	connection.send({ type: "destroy", session: "s9" });
	connection.send({ type: "start", session: "s1", mode: "planner" });
	expect(await connection.expect("start-failed")).toMatchObject({ session: "s1" });
	expect(record.destroyed).toEqual([]);
});

test("with retry-turn a turn's message and retry reach the backend; without it a turn carrying them is malformed", async () => {
	const record = recorder();
	const { connection } = await attachedLink(server, record, { features: ["retry-turn"] });
	expect(connection.requested).toContain("retry-turn");
	connection.send({ type: "start", session: "s1", mode: "planner" });
	await connection.expect("started");
	connection.send({ type: "turn", session: "s1", turn: "t1", prompt: "@bo: hi", message: "m1", tools: [] });
	const retry = {
		type: "turn",
		session: "s1",
		turn: "t2",
		prompt: "@bo: hi",
		message: "m1",
		retry: true,
	} as const;
	expect(await connection.expect("turn-end")).toMatchObject({ turn: "t1", status: "finished" });
	connection.send({ ...retry, tools: [] });
	expect(await connection.expect("turn-end")).toMatchObject({ turn: "t2", status: "finished" });
	expect(record.turns.map((t) => [t.message, t.retry])).toEqual([
		["m1", false],
		["m1", true],
	]);

	// A client that did not ask for retry-turn never gets either field: one is a malformed message.
	const other = recorder();
	const { connection: plain } = await attachedLink(server, other);
	expect(plain.requested).not.toContain("retry-turn");
	plain.send({ type: "start", session: "s1", mode: "planner" });
	await plain.expect("started");
	plain.sendRaw(JSON.stringify({ ...retry, tools: [] }));
	expect(await plain.closed).toEqual({ code: 4400, reason: "malformed-message" });
	expect(other.turns).toEqual([]);
});
