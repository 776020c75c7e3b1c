// invoke_planner on /mcp through the official SDK client, against a real server and a scripted Planner client on the
// agent connection: the reply comes back as the result (also after more than Bun's 10 s idle timeout), the request
// shows in Chat as a notice, the spec's refusals, as: "system" only for the Planner's holder, and /mcp with AGENT=off.
import { afterEach, describe, expect, test } from "bun:test";
import { JSON_TOO_DEEP_MESSAGE } from "@chopin/agent-link/json-depth";
import { wording } from "../agent/wording";
import { AgentFixture } from "../testing/agent-fixture";
import type { AgentSocket } from "../testing/agent-socket";
import { connectMcp, type McpTestClient, postMcp } from "../testing/mcp";

let f: AgentFixture | undefined;
const clients: McpTestClient[] = [];
afterEach(async () => {
	for (const c of clients.splice(0)) await c.close();
	await f?.close();
	f = undefined;
});

async function mcp(fixture: AgentFixture, login: string): Promise<McpTestClient> {
	const client = await connectMcp(fixture.server.url, fixture.token(login));
	clients.push(client);
	return client;
}

/** Answers the next turn the Planner gets with `text`, after `delayMs` of real time; returns the turn. */
async function answer(socket: AgentSocket, text: string, delayMs = 0) {
	const start = await socket.expect("start");
	socket.send({ type: "started", session: start.session });
	const turn = await socket.expect("turn");
	if (delayMs) await Bun.sleep(delayMs);
	socket.send({
		type: "part",
		session: turn.session,
		turn: turn.turn,
		part: { type: "text-delta", id: "t", delta: text },
	});
	socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
	return turn;
}

describe("invoke_planner with an account's token", () => {
	test("an account sees invoke_planner only; the Planner's reply is the result, and Chat shows who asked", async () => {
		f = await AgentFixture.start();
		const doc = await f.createDocument();
		await f.signIn("alice");
		const { socket } = await f.attach("alice", doc.id);
		const client = await mcp(f, "bob");
		expect((await client.client.listTools()).tools.map((t) => t.name)).toEqual(["invoke_planner"]);
		const [reply, turn] = await Promise.all([
			client.call("invoke_planner", {
				message: "Is step two settled?",
				document: `${f.publicUrl}/d/${doc.id}`,
			}),
			answer(socket, "Yes: step two ships on Friday."),
		]);
		expect(reply).toBe("Yes: step two ships on Friday.");
		expect(turn.prompt).toBe("@bob's coding agent: Is step two settled?");
		const chat = await f.chat(doc.id);
		expect(chat.map((m) => [m.role, m.body])).toEqual([
			["system", "@bob's coding agent asked @chopin:\n\nIs step two settled?"],
			["planner", "Yes: step two ships on Friday."],
		]);
		expect(chat[1]!.replyTo).toBe(chat[0]!.id);
		await f.until(() => f!.ctx.planner.status(doc.id).state === "attached", "the Planner to be idle");
	});

	test("a call longer than Bun's 10 s idle timeout still gets its reply", async () => {
		f = await AgentFixture.start();
		const doc = await f.createDocument();
		await f.signIn("alice");
		const { socket } = await f.attach("alice", doc.id);
		const client = await mcp(f, "alice");
		const [reply] = await Promise.all([
			client.call("invoke_planner", { message: "Take your time.", document: doc.id }),
			answer(socket, "Done thinking.", 11_000),
		]);
		expect(reply).toBe("Done thinking.");
	}, 30_000);

	test('as: "system" only from the account that holds the Planner', async () => {
		f = await AgentFixture.start();
		const doc = await f.createDocument();
		await f.signIn("alice");
		const { socket } = await f.attach("alice", doc.id);
		const bob = await mcp(f, "bob");
		expect(
			await bob.refused("invoke_planner", { message: "Run ended.", as: "system", document: doc.id }),
		).toEqual({
			code: "planner-forbidden",
			message: "Only @alice, who holds this document's Planner, can send it an automatic follow-up.",
		});
		expect(await f.chat(doc.id)).toEqual([]);
		const alice = await mcp(f, "alice");
		const [reply, turn] = await Promise.all([
			alice.call("invoke_planner", { message: "Build run_x ended.", as: "system", document: doc.id }),
			answer(socket, "Noted."),
		]);
		expect(reply).toBe("Noted.");
		expect(turn.prompt).toBe("Chopin (automatic follow-up): Build run_x ended.");
		expect((await f.chat(doc.id))[0]!.body).toBe(
			"An automatic follow-up from Chopin (sent by @alice) for @chopin:\n\nBuild run_x ended.",
		);
	});

	test("no attached Planner: planner-not-attached with the spec's sentence, and nothing is kept", async () => {
		f = await AgentFixture.start();
		const doc = await f.createDocument();
		const client = await mcp(f, "bob");
		expect(await client.refused("invoke_planner", { message: "Anyone there?", document: doc.id })).toEqual({
			code: "planner-not-attached",
			message: wording.notAttached(`${f.publicUrl}/d/${doc.id}`, "acme/app"),
		});
		expect(await f.chat(doc.id)).toEqual([]);
	});

	test("while the Planner works, another call is refused planner-busy", async () => {
		f = await AgentFixture.start();
		const doc = await f.createDocument();
		await f.signIn("alice");
		const { socket } = await f.attach("alice", doc.id);
		const client = await mcp(f, "alice");
		const first = client.call("invoke_planner", { message: "First.", document: doc.id });
		const start = await socket.expect("start");
		expect(await client.refused("invoke_planner", { message: "Second.", document: doc.id })).toEqual({
			code: "planner-busy",
			message: wording.busy(),
		});
		socket.send({ type: "started", session: start.session });
		const turn = await socket.expect("turn");
		socket.send({
			type: "turn-end",
			session: turn.session,
			turn: turn.turn,
			status: "failed",
			error: "model down",
		});
		await expect(first).rejects.toThrow(/planner-failed/);
	});

	test("the document: required for an account, pushable by it, and hidden from those who cannot read it", async () => {
		f = await AgentFixture.start();
		const doc = await f.createDocument();
		expect((await (await mcp(f, "bob")).refused("invoke_planner", { message: "hi" })).code).toBe(
			"document-required",
		);
		expect(
			(await (await mcp(f, "carol")).refused("invoke_planner", { message: "hi", document: doc.id })).code,
		).toBe("repository-forbidden");
		const dave = await mcp(f, "dave");
		expect((await dave.refused("invoke_planner", { message: "hi", document: doc.id })).code).toBe(
			"document-not-found",
		);
		expect(
			(await dave.refused("invoke_planner", { message: "hi", document: "https://elsewhere.test/d/x" })).code,
		).toBe("document-not-found");
	});
});

describe("/mcp itself", () => {
	test("401 for a missing, malformed or unknown bearer, and for a machine's or Planner's credential", async () => {
		f = await AgentFixture.start();
		const refused: Record<string, string>[] = [
			{},
			{ authorization: "Basic abc" },
			{ authorization: "Bearer not-a-known-token-000" },
			{ authorization: `Bearer chopin_r_${"A".repeat(43)}` },
			{ authorization: `Bearer chopin_m_${"A".repeat(43)}` },
			{ authorization: `Bearer chopin_p_${"A".repeat(43)}` },
		];
		for (const headers of refused) {
			const res = await postMcp(f.server.url, headers);
			expect(res.status).toBe(401);
			expect(res.headers.get("content-type")).toStartWith("application/json");
			expect(((await res.json()) as { code: string }).code).toBe("unauthorized");
		}
		// A POST from another site's page is refused before anything.
		const foreign = await postMcp(f.server.url, {
			authorization: `Bearer ${f.token("alice")}`,
			origin: "https://evil.test",
		});
		expect(foreign.status).toBe(403);
	});

	test("a body nested deeper than 128 levels is 400 json-too-deep before the SDK reads it", async () => {
		f = await AgentFixture.start();
		const deep = "[".repeat(9000) + "]".repeat(9000);
		const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"invoke_planner","arguments":{"message":${deep}}}}`;
		const res = await postMcp(f.server.url, { authorization: `Bearer ${f.token("alice")}` }, call);
		expect(res.status).toBe(400);
		expect(await res.json()).toEqual({
			code: "json-too-deep",
			message: JSON_TOO_DEEP_MESSAGE,
			hint: "Send the data with less nesting.",
		});
		// Without a bearer it is 401 first: nothing is read for an unknown caller.
		expect((await postMcp(f.server.url, {}, call)).status).toBe(401);
		// An initialize within the limit still reaches the SDK.
		expect((await postMcp(f.server.url, { authorization: `Bearer ${f.token("alice")}` })).status).toBe(200);
	});

	test("GitHub mode: a GitHub token is the account; a chopin_ credential never reaches GitHub", async () => {
		f = await AgentFixture.start({ mode: "github" });
		const doc = await f.createDocument();
		const client = await mcp(f, "octocat");
		expect(await client.refused("invoke_planner", { message: "hi", document: doc.id })).toMatchObject({
			code: "planner-not-attached",
		});
		const before = f.gh!.requests().length;
		expect((await postMcp(f.server.url, { authorization: `Bearer chopin_m_${"A".repeat(43)}` })).status).toBe(
			401,
		);
		expect(f.gh!.requests().length).toBe(before);
	});

	test("AGENT=off does not disable /mcp", async () => {
		f = await AgentFixture.start({ env: { AGENT: "off" } });
		const doc = await f.createDocument();
		const client = await mcp(f, "bob");
		expect((await client.client.listTools()).tools.map((t) => t.name)).toEqual(["invoke_planner"]);
		expect((await client.refused("invoke_planner", { message: "hi", document: doc.id })).code).toBe(
			"planner-not-attached",
		);
	});
});
