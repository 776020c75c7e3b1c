/** The capabilities option (capability-catalog): asked for, reported first after attached and after resumed, each connect. */
import { afterEach, beforeEach, expect, test } from "bun:test";
import type { Catalog } from "../schemas/catalog";
import { connectAgent } from "./connection";
import { DOCUMENT, TOKEN } from "./contract/harness";
import { ScriptedServer } from "./contract/scripted-server";
import { attachedLink, recorder, sync } from "./testing";

let server: ScriptedServer;
beforeEach(() => {
	server = new ScriptedServer(TOKEN);
});
afterEach(() => server.stop());

const CATALOG: Catalog = {
	models: {
		available: [{ id: "gpt-5.1", name: "GPT-5.1", thinkingLevels: ["low", "xhigh"] }],
		default: { id: "gpt-5.1" },
	},
	commands: [{ name: "review", kind: "skill" }],
};

test("with capabilities the client asks for capability-catalog and reports the catalog right after attached", async () => {
	const { link, connection } = await attachedLink(server, recorder(), { capabilities: CATALOG });
	expect(connection.requested).toContain("capability-catalog");
	expect(link.features.has("capability-catalog")).toBe(true);
	expect(await connection.next()).toEqual({ type: "capabilities", catalog: CATALOG });
	// A change later is reported with reportCapabilities, replacing the first.
	link.reportCapabilities({});
	expect(await connection.next()).toEqual({ type: "capabilities", catalog: {} });
});

test("a server that does not grant the feature is sent no catalog", async () => {
	const { connection } = await attachedLink(server, recorder(), { capabilities: CATALOG, grant: [] });
	await sync(connection);
	expect(connection.frames.filter((f) => "message" in f && f.message.type === "capabilities")).toEqual([]);
});

test("without the option the feature is not asked for", async () => {
	const { link, connection } = await attachedLink(server, recorder());
	expect(connection.requested).not.toContain("capability-catalog");
	expect(link.features.has("capability-catalog")).toBe(false);
});

test("after a resume, resume stays the first message and the catalog, read again, follows resumed", async () => {
	let offer: Catalog = CATALOG;
	const record = recorder();
	const first = await attachedLink(server, record, { capabilities: () => offer });
	expect((await first.connection.next()).type).toBe("capabilities");
	first.connection.terminate();
	const { resume } = await first.link.closed;
	offer = { models: { available: [{ id: "claude", name: "Claude" }] } };
	const linking = connectAgent({
		url: server.url,
		token: TOKEN,
		document: DOCUMENT,
		handlers: record.handlers,
		capabilities: () => offer,
		resume,
	});
	const connection = await server.nextConnection();
	await connection.attach();
	expect(await connection.next()).toEqual({ type: "resume", sessions: [] });
	connection.send({ type: "resumed", sessions: [] });
	await linking;
	expect(await connection.next()).toEqual({ type: "capabilities", catalog: offer });
});

test("a catalog with a value of the wrong type is refused before anything opens", async () => {
	const error = await connectAgent({
		url: server.url,
		token: TOKEN,
		document: DOCUMENT,
		handlers: recorder().handlers,
		capabilities: { models: { available: "gpt" } } as unknown as Catalog,
	}).catch((e) => e);
	expect(error).toMatchObject({ code: "invalid-options" });
	expect(server.upgrades).toEqual([]);
});

test("a turn's model and thinkingLevel are read as sent", async () => {
	const record = recorder();
	const { connection } = await attachedLink(server, record, { capabilities: CATALOG });
	await connection.expect("capabilities");
	connection.send({ type: "start", session: "s1", mode: "planner" });
	await connection.expect("started");
	connection.send({
		type: "turn",
		session: "s1",
		turn: "t1",
		prompt: "hi",
		model: "gpt-5.1",
		thinkingLevel: "xhigh",
		tools: [],
	});
	await connection.expect("turn-end");
	expect(record.turns.map((t) => [t.model, t.thinkingLevel])).toEqual([["gpt-5.1", "xhigh"]]);
});
