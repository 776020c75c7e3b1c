/** connectAgent around the edges: the ws class under Bun, aborting, detach, capabilities and a spent resume. */
import { afterEach, beforeEach, expect, test } from "bun:test";
import WebSocket from "ws";
import { questions } from "../testing/examples";
import { connectAgent } from "./connection";
import { DOCUMENT, TOKEN } from "./contract/harness";
import { ScriptedServer } from "./contract/scripted-server";
import { UpgradeRefused } from "./errors";
import { attachedLink, recorder, sync } from "./testing";
import type { WebSocketConstructor } from "./transport";

let server: ScriptedServer;
beforeEach(() => {
	server = new ScriptedServer(TOKEN);
});
afterEach(() => server.stop());

const options = () => ({ url: server.url, token: TOKEN, document: DOCUMENT, handlers: recorder().handlers });

test("with the ws class a refused upgrade carries the status and the body's code", async () => {
	server.refuseNext(503, { code: "github-unavailable" });
	const error = await connectAgent({
		...options(),
		WebSocket: WebSocket as unknown as WebSocketConstructor,
	}).catch((e) => e);
	expect(error).toBeInstanceOf(UpgradeRefused);
	expect(error).toMatchObject({ status: 503, code: "github-unavailable" });
});

test("with the ws class a link attaches and detaches as with Bun's", async () => {
	const record = recorder();
	const { link, connection } = await attachedLink(server, record, {
		WebSocket: WebSocket as unknown as WebSocketConstructor,
	});
	expect(link.attached.document.repository).toBe("octo-org/score");
	const closed = link.detach();
	await connection.expect("detach");
	expect(await closed).toEqual({ code: 1000, reason: "detach" });
});

test("aborting the signal while connecting rejects with aborted", async () => {
	const controller = new AbortController();
	const linking = connectAgent({ ...options(), signal: controller.signal });
	const connection = await server.nextConnection();
	await connection.expect("attach");
	controller.abort();
	expect(await linking.catch((e) => e)).toMatchObject({ name: "LinkError", code: "aborted" });
});

test("detach ends everything the link held, even with resumable-sessions: questions cancelled, sessions destroyed", async () => {
	const record = recorder();
	const { link, connection } = await attachedLink(server, record);
	connection.send({ type: "start", session: "s1", mode: "planner" });
	await connection.expect("started");
	const asked = record.sessions[0]!.ask(questions.confirm);
	await connection.expect("input-request");
	const closed = await link.detach();
	expect(closed).toEqual({ code: 1000, reason: "detach" });
	expect(await asked).toMatchObject({
		status: "cancelled",
		local: true,
		message: "The link to Chopin closed.",
	});
	expect(record.destroyed).toEqual(["s1"]);
	expect(await connection.expect("detach")).toEqual({ type: "detach" });
});

test("capabilities need capability-catalog granted", async () => {
	const { link, connection } = await attachedLink(server, recorder(), {
		features: ["capability-catalog"],
		grant: [],
	});
	expect(() => link.reportCapabilities({})).toThrow(expect.objectContaining({ code: "feature-not-granted" }));
	await sync(connection);
});

test("a resume is used once: after it resumed, passing it again is refused", async () => {
	const record = recorder();
	const first = await attachedLink(server, record);
	first.connection.terminate();
	const { resume } = await first.link.closed;
	expect(resume?.usable).toBe(true);
	const second = connectAgent({ ...options(), handlers: record.handlers, resume });
	const connection = await server.nextConnection();
	await connection.attach();
	expect(await connection.expect("resume")).toEqual({ type: "resume", sessions: [] });
	connection.send({ type: "resumed", sessions: [] });
	await second;
	expect(resume?.usable).toBe(false);
	expect(await connectAgent({ ...options(), resume }).catch((e) => e)).toMatchObject({
		code: "resume-unavailable",
	});
});

test("a plain ws: URL that is not loopback is refused before anything opens", async () => {
	const error = await connectAgent({ ...options(), url: "http://chopin.example" }).catch((e) => e);
	expect(error).toMatchObject({ name: "LinkError", code: "insecure-url" });
	expect(server.upgrades).toEqual([]);
});
