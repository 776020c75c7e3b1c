import { expect, test } from "bun:test";
import * as link from "./index";
import { clientMessages, serverMessages } from "./testing/examples";

test("the root index exports the parse entries, encoders, schemas and constants", () => {
	const exported: Record<string, unknown> = { ...link };
	for (const name of [
		"parseClientFrame",
		"parseServerFrame",
		"encodeMessage",
		"encodeClientMessage",
		"encodeServerMessage",
		"toWireError",
		"parseFeaturesHeader",
		"formatFeaturesHeader",
		"normalizeCatalog",
		"readInputResult",
		"readToolError",
		"readToolResult",
		"cutNote",
	]) {
		expect(typeof exported[name]).toBe("function");
	}
	for (const name of [
		"clientMessageSchema",
		"serverMessageSchema",
		"streamPartSchema",
		"runCardSchema",
		"questionSchema",
		"catalogSchema",
		"attachmentSchema",
		"toolErrorSchema",
		"toolImageSchema",
	]) {
		expect(typeof (exported[name] as { safeParse?: unknown }).safeParse).toBe("function");
	}
	expect(link.SUBPROTOCOL).toBe("chopin.agent.v1");
	expect(link.PROTOCOL_VERSION).toBe(1);
	expect(link.MAX_FRAME_BYTES).toBe(2_097_152);
	expect(link.FEATURES).toHaveLength(9);
});

test("the exported types are the schemas' own", () => {
	const attach: link.Attach = clientMessages.attach;
	const turn: link.Turn = serverMessages.turn;
	const client: link.ClientMessage = attach;
	const server: link.ServerMessage = turn;
	const part: link.StreamPart = clientMessages.part.part;
	const card: link.RunCard = clientMessages.runs.cards[0] as link.RunCard;
	const request: link.InputRequest = clientMessages["input-request"];
	const result: link.InputResult = serverMessages["input-result"];
	const catalog: link.Catalog = clientMessages.capabilities.catalog;
	expect(link.clientMessageSchema.parse(client)).toEqual(attach);
	expect(link.serverMessageSchema.parse(server)).toEqual(turn);
	expect([part, card, request, result, catalog].every(Boolean)).toBe(true);
});
