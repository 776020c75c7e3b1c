/** reconnectAgent outside the restart window: final closes, the caller's backoff, and giving up. */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { Backoff } from "../backoff";
import { ManualClock } from "../clock";
import { DOCUMENT, TOKEN } from "./contract/harness";
import { ScriptedServer } from "./contract/scripted-server";
import { type ReconnectEvent, reconnectAgent } from "./reconnect";
import { attachedLink, recorder } from "./testing";

let server: ScriptedServer;
beforeEach(() => {
	server = new ScriptedServer(TOKEN);
});
afterEach(() => server.stop());

const options = (clock: ManualClock) => ({
	url: server.url,
	token: TOKEN,
	document: DOCUMENT,
	clock,
	handlers: recorder().handlers,
});

test("a link that ended for good is not reconnected", async () => {
	const clock = new ManualClock();
	const refused = {
		code: 4409,
		reason: "",
		refused: { code: "planner-attached" as const, message: "x", retry: false },
	};
	expect(await reconnectAgent(options(clock), refused).catch((e) => e)).toMatchObject({
		code: "link-closed",
	});
	const error = { code: 1008, reason: "", error: { code: "protocol", message: "x", by: "server" as const } };
	expect(await reconnectAgent(options(clock), error).catch((e) => e)).toMatchObject({ code: "link-closed" });
	expect(server.upgrades).toEqual([]);
});

test("after a drop other than 1012 it waits the caller's backoff first, then resumes", async () => {
	const record = recorder();
	const { link, connection, clock } = await attachedLink(server, record);
	connection.terminate();
	const closed = await link.closed;
	const events: ReconnectEvent[] = [];
	const reconnecting = reconnectAgent({ ...options(clock), handlers: record.handlers }, closed, {
		backoff: Backoff.schedule([3_000]),
		onEvent: (event) => {
			events.push(event);
			if (event.type === "waiting") void clock.advance(event.ms);
		},
	});
	const next = await server.nextConnection();
	await next.attach();
	await next.expect("resume");
	next.send({ type: "resumed", sessions: [] });
	await reconnecting;
	expect(events).toEqual([
		{ type: "waiting", ms: 3_000, rule: "backoff" },
		{ type: "attempt", attempt: 1 },
	]);
});

test("a failure not worth retrying ends the loop with that failure", async () => {
	const clock = new ManualClock();
	server.refuseNext(401, { code: "unauthorized" });
	const closed = { code: 1012, reason: "restarting", reconnectWithinMs: 1_000 };
	const error = await reconnectAgent(options(clock), closed).catch((e) => e);
	expect(error).toMatchObject({ name: "UpgradeRefused", status: 401 });
	expect(server.upgrades.length).toBe(1);
});

test("its signal stops the wait", async () => {
	const clock = new ManualClock();
	const controller = new AbortController();
	const waiting = reconnectAgent(options(clock), { code: 1006, reason: "" }, { signal: controller.signal });
	controller.abort(new Error("stopping"));
	expect(await waiting.catch((e) => e)).toMatchObject({ message: "stopping" });
});
