// Spec "Stream parts": text streamed live into Chat, the client's own declared tools with their rows in Work
// details (structured errors, masked credentials, images a tool made), and every rule that fails a turn: a tool
// boundary failure, a repeated call, an error part.
import { afterEach, describe, expect, test } from "bun:test";
import { makePng } from "../images/test-images";
import type { LiveEvent } from "../live/events";
import { AgentFixture } from "../testing/agent-fixture";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

async function inTurn() {
	f = await AgentFixture.start();
	const doc = await f.createDocument();
	await f.signIn("alice");
	const { socket } = await f.attach("alice", doc.id);
	const events = f.events(doc.id);
	const turn = await f.chatTurn(socket, doc.id, "bob");
	const part = (p: unknown) => ({ type: "part", session: turn.session, turn: turn.turn, part: p });
	const end = (status = "finished", message?: string) => ({
		type: "turn-end",
		session: turn.session,
		turn: turn.turn,
		status,
		...(message && { message }),
	});
	const reply = async () => {
		await f!.until(
			async () => (await f!.chat(doc.id)).some((m) => m.role === "planner" && m.status !== "streaming"),
			"the reply",
		);
		await f!.ctx.planner.settled();
		return (await f!.chat(doc.id)).find((m) => m.role === "planner")!;
	};
	return { f, socket, turn, part, end, reply, events, documentId: doc.id };
}

const ownTool = {
	type: "tool-call",
	toolCallId: "c1",
	toolName: "search",
	input: '{"q":"x"}',
	providerExecuted: true,
};

describe("text", () => {
	test("text deltas reach the live hub as they are read and make the reply; separate text blocks are paragraphs", async () => {
		const { f, socket, part, end, reply, events } = await inTurn();
		const deltas = () =>
			events
				.filter((e): e is Extract<LiveEvent, { type: "message.delta" }> => e.type === "message.delta")
				.map((d) => [d.offset, d.delta]);
		// Parts read from the socket in one go reach the hub as one delta.
		socket.sendBatch([
			part({ type: "stream-start", modelId: "m" }),
			part({ type: "text-start", id: "t1" }),
			part({ type: "text-delta", id: "t1", delta: "Hello" }),
			part({ type: "text-delta", id: "t1", delta: ", world." }),
			part({ type: "text-end", id: "t1" }),
			part({ type: "reasoning-start", id: "r1" }),
			part({ type: "reasoning-delta", id: "r1", delta: "thinking" }),
			part({ type: "reasoning-end", id: "r1" }),
			part({ type: "text-delta", id: "t2", delta: "Second." }),
		]);
		await f.until(() => deltas().length === 1, "the first delta");
		expect(deltas()).toEqual([[0, "Hello, world.\n\nSecond."]]);
		socket.send(part({ type: "text-delta", id: "t2", delta: " Third." }));
		await f.until(() => deltas().length === 2, "the second delta");
		expect(deltas()[1]).toEqual([22, " Third."]);
		socket.sendBatch([
			part({
				type: "finish-step",
				finishReason: { unified: "stop" },
				usage: { inputTokens: {}, outputTokens: {} },
			}),
			part({
				type: "finish",
				finishReason: { unified: "stop" },
				totalUsage: { inputTokens: { total: 3 }, outputTokens: {} },
			}),
			end(),
		]);
		expect(await reply()).toMatchObject({ status: "done", body: "Hello, world.\n\nSecond. Third." });
		expect(events.findLast((e) => e.type === "message.updated")).toMatchObject({
			message: { status: "done" },
		});
	});

	test("an error part fails the turn with its text", async () => {
		const { socket, part, reply } = await inTurn();
		socket.send(part({ type: "error", error: "The provider refused the request." }));
		expect(await socket.expect("abort")).toBeDefined();
		expect(await reply()).toMatchObject({ status: "failed", error: "The provider refused the request." });
	});
});

describe("the client's own tools", () => {
	test("a declared tool's call and result make a Work details row", async () => {
		const { socket, part, end, reply, turn } = await inTurn();
		socket.sendBatch([
			{ type: "tools", session: turn.session, turn: turn.turn, names: ["search"] },
			part({ type: "tool-input-start", id: "c1", toolName: "search" }),
			part({ type: "tool-input-delta", id: "c1", delta: '{"q":' }),
			part({ type: "tool-input-end", id: "c1" }),
			part(ownTool),
			part({
				type: "tool-result",
				toolCallId: "c1",
				toolName: "search",
				result: { hits: 2 },
				preliminary: true,
			}),
			part({ type: "tool-result", toolCallId: "c1", toolName: "search", result: { hits: 3 } }),
			end(),
		]);
		const message = await reply();
		expect(message.status).toBe("done");
		expect(message.tools).toEqual([
			expect.objectContaining({
				toolCallId: "c1",
				name: "search",
				input: '{"q":"x"}',
				status: "done",
				result: '{"hits":3}',
			}),
		]);
	});

	test("a structured tool error shows its kind and masked message; credentials in a result are masked", async () => {
		const { socket, part, end, reply, turn } = await inTurn();
		socket.sendBatch([
			{ type: "tools", session: turn.session, turn: turn.turn, names: ["clone", "fetch"] },
			part({ ...ownTool, toolName: "clone", toolCallId: "c1" }),
			part({
				type: "tool-result",
				toolCallId: "c1",
				toolName: "clone",
				isError: true,
				result: {
					error: {
						code: "no-repository-credential",
						kind: "NoRepositoryCredential",
						message: "Could not read https://alice:hunter2@example.com/repo.git",
					},
				},
			}),
			part({ ...ownTool, toolName: "fetch", toolCallId: "c2" }),
			part({
				type: "tool-result",
				toolCallId: "c2",
				toolName: "fetch",
				result: `token=ghp_${"f".repeat(36)}`,
			}),
			end(),
		]);
		const [clone, fetch] = (await reply()).tools;
		expect(clone).toMatchObject({
			status: "failed",
			error: {
				label: "NoRepositoryCredential",
				message: "Could not read https://[redacted]@example.com/repo.git",
			},
		});
		expect(fetch!.result).not.toContain("ghp_");
	});

	test("images an own tool made are stored and shown on the reply; one Chat will not host is listed in refusedImages", async () => {
		const { socket, part, end, reply, turn } = await inTurn();
		const png = Buffer.from(makePng(8, 6)).toString("base64");
		socket.sendBatch([
			{ type: "tools", session: turn.session, turn: turn.turn, names: ["draw"] },
			part({ ...ownTool, toolName: "draw" }),
			part({
				type: "tool-result",
				toolCallId: "c1",
				toolName: "draw",
				result: {
					content: [
						{ type: "text", text: "Two pictures." },
						{ type: "image", data: png, mimeType: "image/png", alt: "a chart" },
						{ type: "image", data: Buffer.from("<svg/>").toString("base64"), mimeType: "image/svg+xml" },
					],
				},
			}),
			end(),
		]);
		const message = await reply();
		expect(message.images).toEqual([
			expect.objectContaining({ mediaType: "image/png", width: 8, height: 6, alt: "a chart" }),
		]);
		expect(message.refusedImages).toEqual([
			{ before: 1, reason: expect.stringMatching(/^Image couldn't be shown:/) },
		]);
		expect(message.tools[0]).toMatchObject({ imageCount: 2, status: "done" });
	});
});

describe("tool boundary failures fail the turn", () => {
	const cases: [string, (ids: { session: string; turn: string }) => unknown[], string][] = [
		["a tool-call of a tool not declared", () => [ownTool], "was not declared with tools first"],
		[
			"a tool-call naming a host tool",
			() => [{ ...ownTool, toolName: "read_plan" }],
			"call host tools with host-tool-call",
		],
		[
			"a tool-result without its tool-call",
			(t) => [
				{ type: "tools", ...t, names: ["search"] },
				{ type: "tool-result", toolCallId: "c9", toolName: "search", result: 1 },
			],
			"does not follow its own tool-call",
		],
		[
			"a tool-result after its final result",
			(t) => [
				{ type: "tools", ...t, names: ["search"] },
				ownTool,
				{ type: "tool-result", toolCallId: "c1", toolName: "search", result: 1 },
				{ type: "tool-result", toolCallId: "c1", toolName: "search", result: 2 },
			],
			"after its final result",
		],
		[
			"tool-input-start naming a tool neither offered nor declared",
			() => [{ type: "tool-input-start", id: "i1", toolName: "mystery" }],
			"neither offers nor declared",
		],
		[
			"an own tool declared with a host tool's name",
			(t) => [{ type: "tools", ...t, names: ["edit_plan"] }],
			"has a host tool's name",
		],
		[
			"a tool-call reusing a toolCallId",
			(t) => [{ type: "tools", ...t, names: ["search"] }, ownTool, ownTool],
			"Repeated tool call",
		],
		[
			"a host-tool-call reusing an own call's id",
			(t) => [
				{ type: "tools", ...t, names: ["search"] },
				ownTool,
				{ type: "host-tool-call", ...t, toolCallId: "c1", toolName: "read_plan", input: "{}" },
			],
			"Repeated tool call",
		],
	];
	for (const [name, build, failure] of cases) {
		test(name, async () => {
			const { socket, part, reply, turn } = await inTurn();
			const ids = { session: turn.session, turn: turn.turn };
			socket.sendBatch(
				build(ids).map((m) => {
					const message = m as { type: string };
					return message.type === "tools" || message.type === "host-tool-call" ? message : part(message);
				}),
			);
			expect(await socket.nextOf("abort")).toEqual({ type: "abort", ...ids });
			const message = await reply();
			expect(message.status).toBe("failed");
			expect(message.error).toContain(failure);
			// Nothing the client sends for the turn afterwards changes it; its turn-end is accepted once.
			socket.send(part({ type: "text-delta", id: "x", delta: "late" }));
			socket.send({ type: "turn-end", ...ids, status: "aborted" });
			await f!.sync(socket);
			expect((await reply()).body).toBe(message.body);
		});
	}

	test("providerExecuted must say true: anything else is a malformed message (1008)", async () => {
		const { socket, part } = await inTurn();
		socket.send(part({ ...ownTool, providerExecuted: false }));
		expect(await socket.expect("error")).toMatchObject({ code: "malformed-message" });
		expect((await socket.closed).code).toBe(1008);
	});
});
