// capability-catalog on the server (spec: Capability catalog): the report read as written and held with the link,
// the composer's chat.model state, a person's choice of model and level reaching the next turn, and the fallback
// when the catalog no longer lists it, said once in Chat. Choices are stored: both databases.
import { afterEach, describe, expect, test } from "bun:test";
import type { Catalog } from "@chopin/agent-link";
import type { ChatModelEvent } from "../live/events";
import { runnableKinds } from "../store/testing";
import { AgentFixture } from "../testing/agent-fixture";
import type { AgentSocket } from "../testing/agent-socket";
import type { CookieJar } from "../testing/sign-in";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

const CATALOG: Catalog = {
	models: {
		available: [
			{ id: "", name: "Nameless" },
			{
				id: "gpt-5.1",
				name: "GPT-5.1",
				provider: { id: "openai", name: "OpenAI" },
				thinkingLevels: ["", "low", "xhigh", "High", "high"],
				inputTypes: ["text", "image"],
				pricing: { per: "token" },
			},
			{
				id: "claude-opus",
				name: "Claude Opus",
				provider: { id: "anthropic" },
				thinkingLevels: ["低", "extra high"],
			},
			{ id: "local-7b", name: "Local 7B" },
		],
		default: { id: "gpt-5.1", thinkingLevel: "low" },
	},
	commands: [
		{ name: "review", description: "Review a change", kind: "skill" },
		{ name: "ship", kind: "workflow" },
	],
};

async function attached(
	kind: "sqlite" | "postgres",
	options: { features?: string; env?: Record<string, string>; catalog?: Catalog } = {},
) {
	f = await AgentFixture.start({ store: kind, ...(options.env && { env: options.env }) });
	const doc = await f.createDocument();
	const jar = await f.signIn("alice");
	const { socket, attached } = await f.attach("alice", doc.id, {
		features: options.features ?? "capability-catalog",
	});
	if (options.catalog) await report(f, socket, options.catalog);
	return { f, socket, attached, documentId: doc.id, jar };
}

/** Sends a report and waits until the server has read it. */
async function report(f: AgentFixture, socket: AgentSocket, catalog: Catalog): Promise<void> {
	socket.send({ type: "capabilities", catalog });
	await f.sync(socket);
}

async function modelState(f: AgentFixture, documentId: string, jar: CookieJar) {
	const res = await f.request("GET", `/api/documents/${documentId}/model`, undefined, jar);
	expect(res.status).toBe(200);
	return (await res.json()) as Omit<ChatModelEvent, "type" | "documentId">;
}

function choose(
	f: AgentFixture,
	documentId: string,
	jar: CookieJar,
	model: string | null,
	thinkingLevel: string | null,
) {
	return f.request("PUT", `/api/documents/${documentId}/model`, { model, thinkingLevel }, jar);
}

/** A person's @chopin message's turn, read past the earlier turns' destroy. */
async function nextTurn(f: AgentFixture, socket: AgentSocket, documentId: string) {
	const result = await f.ctx.planner.handleMessage({ documentId, author: "bob", body: "@chopin go on" });
	expect(result.status).toBe("sent");
	const start = await socket.nextOf("start");
	socket.send({ type: "started", session: start.session });
	return socket.nextOf("turn");
}

async function finish(
	f: AgentFixture,
	socket: AgentSocket,
	documentId: string,
	turn: { session: string; turn: string },
) {
	socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
	await f.until(() => f.ctx.planner.status(documentId).state === "attached", "the Planner to be idle");
	await f.ctx.planner.settled();
}

const notices = async (f: AgentFixture, documentId: string) =>
	(await f.chat(documentId)).filter((m) => m.role === "system").map((m) => m.body);

describe.each(runnableKinds())("capability catalog (%s)", (kind) => {
	test("attached grants capability-catalog among the features asked for", async () => {
		const { attached: a } = await attached(kind, {
			features: "run-stage-deltas, capability-catalog, attachments",
		});
		expect(a.features).toEqual(["run-stage-deltas", "capability-catalog", "attachments"]);
	});

	test("granted when asked; the report is read as written: empty ids and levels skipped, the rest kept in order", async () => {
		const { f, attached: a, documentId, jar } = await attached(kind, { catalog: CATALOG });
		expect(a.features).toEqual(["capability-catalog"]);
		const state = await modelState(f, documentId, jar);
		expect(state.catalog).toEqual({
			models: [
				{
					id: "gpt-5.1",
					name: "GPT-5.1",
					provider: { id: "openai", name: "OpenAI" },
					thinkingLevels: ["low", "xhigh", "High", "high"],
					inputTypes: ["text", "image"],
				},
				// provider name defaults to its id; levels exactly as spelled.
				{
					id: "claude-opus",
					name: "Claude Opus",
					provider: { id: "anthropic", name: "anthropic" },
					thinkingLevels: ["低", "extra high"],
					inputTypes: [],
				},
				{ id: "local-7b", name: "Local 7B", thinkingLevels: [], inputTypes: [] },
			],
			default: { id: "gpt-5.1", name: "GPT-5.1", thinkingLevel: "low" },
			commands: [
				{ name: "review", description: "Review a change", kind: "skill" },
				{ name: "ship", kind: "workflow" },
			],
		});
		expect(state.choice).toEqual({});
	});

	test("each report replaces the last whole, pages get it as chat.model, and it is gone when the client leaves", async () => {
		const { f, socket, documentId, jar } = await attached(kind, { catalog: CATALOG });
		const events = f.events(documentId);
		await report(f, socket, { commands: [{ name: "only", kind: "prompt" }] });
		// The first report's own event may still be on its way (it reads the document's choice first): the
		// newest event is the one that counts.
		const last = () => events.filter((e) => e.type === "chat.model").at(-1) as ChatModelEvent | undefined;
		await f.until(() => last()?.catalog?.commands[0]?.name === "only", "chat.model of the new report");
		expect(last()!.catalog).toEqual({ models: [], commands: [{ name: "only", kind: "prompt" }] });
		await report(f, socket, {});
		expect((await modelState(f, documentId, jar)).catalog).toEqual({ models: [], commands: [] });
		socket.send({ type: "detach" });
		await socket.closed;
		await f.until(() => last()?.catalog === undefined, "chat.model without a catalog after detach");
		expect(last()).toEqual({
			type: "chat.model",
			documentId,
			choice: {},
		});
		expect((await modelState(f, documentId, jar)).catalog).toBeUndefined();
	});

	test("a person's model and level reach the next turn exactly as the client spelled them", async () => {
		const { f, socket, documentId, jar } = await attached(kind, {
			catalog: CATALOG,
			env: { MODEL: "operator-model" },
		});
		// Without a choice the operator's MODEL is sent, and no level.
		const plain = await nextTurn(f, socket, documentId);
		expect(plain.model).toBe("operator-model");
		expect("thinkingLevel" in plain).toBe(false);
		await finish(f, socket, documentId, plain);

		const res = await choose(f, documentId, jar, "claude-opus", "extra high");
		expect(res.status).toBe(200);
		expect((await res.json()).choice).toEqual({
			model: "claude-opus",
			modelName: "Claude Opus",
			thinkingLevel: "extra high",
		});
		const turn = await nextTurn(f, socket, documentId);
		expect(turn.model).toBe("claude-opus");
		expect(turn.thinkingLevel).toBe("extra high");
		await finish(f, socket, documentId, turn);
		// The choice is the document's: it holds for the next turn too, and nothing was said in Chat.
		const again = await nextTurn(f, socket, documentId);
		expect([again.model, again.thinkingLevel]).toEqual(["claude-opus", "extra high"]);
		expect(await notices(f, documentId)).toEqual([]);
	});

	test("a level with no model chosen is the default model's; a model or level the catalog does not list is refused", async () => {
		const { f, socket, documentId, jar } = await attached(kind, { catalog: CATALOG });
		for (const [model, level, code] of [
			["nope", null, "model-unknown"],
			["gpt-5.1", "HIGH", "thinking-level-unknown"],
			["local-7b", "low", "thinking-level-unknown"],
			[null, "低", "thinking-level-unknown"],
		] as const) {
			const res = await choose(f, documentId, jar, model, level);
			expect(res.status).toBe(409);
			expect((await res.json()).code).toBe(code);
		}
		// An empty model or level is not a choice: refused as a bad request.
		expect((await choose(f, documentId, jar, "", null)).status).toBe(400);
		expect((await choose(f, documentId, jar, null, "xhigh")).status).toBe(200);
		const turn = await nextTurn(f, socket, documentId);
		expect("model" in turn).toBe(false);
		expect(turn.thinkingLevel).toBe("xhigh");
	});

	test("a model the catalog no longer lists: the turn runs with the client's default and Chat says so once", async () => {
		const { f, socket, documentId, jar } = await attached(kind, { catalog: CATALOG });
		expect((await choose(f, documentId, jar, "claude-opus", "低")).status).toBe(200);
		const events = f.events(documentId);
		await report(f, socket, { models: { available: [{ id: "gpt-5.1", name: "GPT-5.1" }] } });
		await f.until(() => events.some((e) => e.type === "chat.model"), "chat.model");
		// The composer says so until Chat records the fallback; the saved name survives the model.
		expect((await modelState(f, documentId, jar)).choice).toEqual({
			model: "claude-opus",
			modelName: "Claude Opus",
			thinkingLevel: "低",
			unavailable: "model",
		});
		const turn = await nextTurn(f, socket, documentId);
		expect("model" in turn).toBe(false);
		expect("thinkingLevel" in turn).toBe(false);
		await finish(f, socket, documentId, turn);
		expect(await notices(f, documentId)).toEqual([
			"The model Claude Opus chosen for this document is no longer offered by the Planner's client, so chopin answered with the client's default model.",
		]);
		expect((await modelState(f, documentId, jar)).choice.unavailable).toBeUndefined();
		const again = await nextTurn(f, socket, documentId);
		expect("model" in again).toBe(false);
		await finish(f, socket, documentId, again);
		expect(await notices(f, documentId)).toHaveLength(1);
		// Listed again, the choice runs again; gone once more, Chat says so once more.
		await report(f, socket, CATALOG);
		const back = await nextTurn(f, socket, documentId);
		expect(back.model).toBe("claude-opus");
		await finish(f, socket, documentId, back);
		await report(f, socket, {});
		await finish(f, socket, documentId, await nextTurn(f, socket, documentId));
		expect(await notices(f, documentId)).toHaveLength(2);
	});

	test("a level its model no longer lists is dropped, the model kept, and Chat names the level", async () => {
		const { f, socket, documentId, jar } = await attached(kind, { catalog: CATALOG });
		expect((await choose(f, documentId, jar, "gpt-5.1", "xhigh")).status).toBe(200);
		await report(f, socket, {
			models: { available: [{ id: "gpt-5.1", name: "GPT-5.1", thinkingLevels: ["low"] }] },
		});
		expect((await modelState(f, documentId, jar)).choice.unavailable).toBe("level");
		const turn = await nextTurn(f, socket, documentId);
		expect(turn.model).toBe("gpt-5.1");
		expect("thinkingLevel" in turn).toBe(false);
		await finish(f, socket, documentId, turn);
		expect(await notices(f, documentId)).toEqual([
			"The thinking level xhigh chosen for this document is no longer offered for GPT-5.1, so chopin answered with the model's default level.",
		]);
	});

	test("without the feature: capabilities is malformed (1008), no choice can be made, and no turn carries a level", async () => {
		// A first client with the feature leaves a choice behind.
		const first = await attached(kind, { catalog: CATALOG });
		expect((await choose(first.f, first.documentId, first.jar, "gpt-5.1", "high")).status).toBe(200);
		first.socket.send({ type: "detach" });
		await first.socket.closed;
		const { f: fx, documentId, jar } = first;
		const { socket, attached: a } = await fx.attach("alice", documentId, { features: "run-stage-deltas" });
		expect(a.features).toEqual(["run-stage-deltas"]);
		// No catalog: the composer offers no choice, a choice is refused, and the stored one is not sent.
		expect((await modelState(fx, documentId, jar)).catalog).toBeUndefined();
		const res = await choose(fx, documentId, jar, "gpt-5.1", null);
		expect(res.status).toBe(409);
		expect((await res.json()).code).toBe("model-choice-unavailable");
		const turn = await nextTurn(fx, socket, documentId);
		expect("model" in turn).toBe(false);
		expect("thinkingLevel" in turn).toBe(false);
		await finish(fx, socket, documentId, turn);
		expect(await notices(fx, documentId)).toEqual([]);
		socket.send({ type: "capabilities", catalog: {} });
		const error = await socket.nextOf("error");
		expect(error.code).toBe("malformed-message");
		expect((await socket.closed).code).toBe(1008);
	});
});
