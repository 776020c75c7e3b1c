// Spec "Images and files in a turn" (attachments) over a real agent link: with the feature the turn that answers
// a person's message carries its files in order (fresh ids, base64 data), images only when the turn's model reads
// them, and a Retry carries the same files; without it the text files are in the prompt and images said in a line.
import { afterEach, describe, expect, test } from "bun:test";
import type { Catalog } from "@chopin/agent-link";
import { makePng } from "../images/test-images";
import { AgentFixture } from "../testing/agent-fixture";
import type { AgentSocket } from "../testing/agent-socket";
import type { CookieJar } from "../testing/sign-in";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

const PNG = makePng(4, 3);
const NOTES = "# Notes\n\nShip on Friday.\n";
const b64 = (bytes: Uint8Array | string) =>
	Buffer.from(typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes).toString("base64");

/** The default model reads text only; vision reads images too. */
const CATALOG: Catalog = {
	models: {
		available: [
			{ id: "local-7b", name: "Local 7B", inputTypes: ["text"] },
			{ id: "vision", name: "Vision", inputTypes: ["text", "image"] },
		],
		default: { id: "local-7b" },
	},
};

async function attached(features: string, catalog?: Catalog) {
	f = await AgentFixture.start();
	const doc = await f.createDocument();
	await f.signIn("alice");
	const bob = await f.signIn("bob");
	const { socket } = await f.attach("alice", doc.id, { features });
	if (catalog) {
		socket.send({ type: "capabilities", catalog });
		await f.sync(socket);
	}
	return { f, socket, bob, documentId: doc.id };
}

/**
 * bob's @chopin message with a screenshot and notes, over the Chat API, and the turn frame it begins. The Chat API
 * answers once the message is on disk, which waits for the turn to leave: the session is started meanwhile.
 */
async function sendWithFiles(f: AgentFixture, socket: AgentSocket, documentId: string, bob: CookieJar) {
	const posting = f.request(
		"POST",
		`/api/documents/${documentId}/messages`,
		{
			body: "@chopin does this match?",
			attachments: [
				{ name: "screenshot.png", data: b64(PNG) },
				{ name: "notes.md", data: b64(NOTES) },
			],
		},
		bob,
	);
	const start = await socket.nextOf("start");
	socket.send({ type: "started", session: start.session });
	const turn = await socket.nextOf("turn");
	const res = await posting;
	expect(res.status).toBe(201);
	const { message } = (await res.json()) as { message: { id: string } };
	return { message, turn };
}

async function end(
	f: AgentFixture,
	socket: AgentSocket,
	documentId: string,
	turn: { session: string; turn: string },
	status: "finished" | "failed",
) {
	socket.send({
		type: "turn-end",
		session: turn.session,
		turn: turn.turn,
		status,
		...(status === "failed" && { message: "The provider is down." }),
	});
	await f.until(() => f.ctx.planner.status(documentId).state === "attached", "the Planner to be idle");
	await f.ctx.planner.settled();
}

describe("with attachments", () => {
	test("a model that reads images gets both files in order, as base64 with fresh ids; a Retry the same files", async () => {
		const { f, socket, bob, documentId } = await attached(
			"attachments, capability-catalog, retry-turn",
			CATALOG,
		);
		expect(
			(
				await f.request(
					"PUT",
					`/api/documents/${documentId}/model`,
					{ model: "vision", thinkingLevel: null },
					bob,
				)
			).status,
		).toBe(200);
		const { message, turn } = await sendWithFiles(f, socket, documentId, bob);
		expect(turn.prompt).toBe("@bob: @chopin does this match?");
		expect(turn.model).toBe("vision");
		const files = turn.attachments!;
		expect(files.map((a) => [a.name, a.kind, a.mediaType, a.size])).toEqual([
			["screenshot.png", "image", "image/png", PNG.length],
			["notes.md", "file", "text/plain", NOTES.length],
		]);
		expect(Buffer.from(files[0]!.data, "base64").equals(PNG)).toBe(true);
		expect(Buffer.from(files[1]!.data, "base64").toString("utf8")).toBe(NOTES);
		expect(files[0]!.id).not.toBe(files[1]!.id);

		await end(f, socket, documentId, turn, "failed");
		const reply = (await f.chat(documentId)).find((m) => m.role === "planner")!;
		const retried = await f.request(
			"POST",
			`/api/documents/${documentId}/messages/${reply.id}/retry`,
			undefined,
			bob,
		);
		expect(retried.status).toBe(202);
		const start = await socket.nextOf("start");
		socket.send({ type: "started", session: start.session });
		const again = await socket.nextOf("turn");
		expect(again).toMatchObject({ message: message.id, retry: true, prompt: turn.prompt });
		expect(again.attachments!.map(({ id: _, ...rest }) => rest)).toEqual(
			files.map(({ id: _, ...rest }) => rest),
		);
		// id is new for each turn and says nothing outside it.
		expect(again.attachments!.map((a) => a.id).some((id) => files.some((a) => a.id === id))).toBe(false);
	});

	test("a model that does not read images (the default here) gets the text file only, and the prompt as it was", async () => {
		const { f, socket, bob, documentId } = await attached("attachments, capability-catalog", CATALOG);
		const { turn } = await sendWithFiles(f, socket, documentId, bob);
		expect(turn.prompt).toBe("@bob: @chopin does this match?");
		expect(turn.attachments!.map((a) => a.name)).toEqual(["notes.md"]);
	});

	test("without a catalog every model reads text only; a message without files has no attachments", async () => {
		const { f, socket, bob, documentId } = await attached("attachments");
		const { turn } = await sendWithFiles(f, socket, documentId, bob);
		expect(turn.attachments!.map((a) => a.kind)).toEqual(["file"]);
		await end(f, socket, documentId, turn, "finished");
		await f.ctx.planner.handleMessage({ documentId, author: "bob", body: "@chopin and now?" });
		const start = await socket.nextOf("start");
		socket.send({ type: "started", session: start.session });
		expect("attachments" in (await socket.nextOf("turn"))).toBe(false);
	});

	test("files cannot be steered into a running turn: the message is refused whole and not posted", async () => {
		const { f, socket, bob, documentId } = await attached("attachments, steer-turn");
		await f.chatTurn(socket, documentId, "bob", "@chopin start");
		const res = await f.request(
			"POST",
			`/api/documents/${documentId}/messages`,
			{ body: "@chopin also this", attachments: [{ name: "notes.md", data: b64(NOTES) }] },
			bob,
		);
		expect(res.status).toBe(409);
		expect(((await res.json()) as { code: string }).code).toBe("planner-busy");
		expect((await f.chat(documentId)).map((m) => m.body)).toEqual(["@chopin start", ""]);
	});
});

describe("without attachments", () => {
	test("the text files are written into the prompt and an image is said in a line; the field is never sent", async () => {
		const { f, socket, bob, documentId } = await attached("capability-catalog", {
			...CATALOG,
			models: { ...CATALOG.models!, default: { id: "vision" } },
		});
		const { turn } = await sendWithFiles(f, socket, documentId, bob);
		expect("attachments" in turn).toBe(false);
		expect(turn.prompt).toBe(
			"@bob: @chopin does this match?\n\n" +
				`[The person also sent an image, screenshot.png (image/png, ${PNG.length} bytes), that could not be given to you here.]\n\n` +
				`<file name="notes.md">\n${NOTES}\n</file>`,
		);
		const raw = socket.received.find((m) => m.type === "turn") as Record<string, unknown>;
		expect(Object.keys(raw)).not.toContain("attachments");
	});

	test("a text file the frame's JSON would blow past 2 MiB is cut to fit, and the prompt says how much was shown", async () => {
		const { f, socket, bob, documentId } = await attached("capability-catalog");
		// 1,000,000 bytes are within the 1 MiB cap; a control character is six bytes once JSON escapes it.
		const controls = "\u0001".repeat(1_000_000);
		const posting = f.request(
			"POST",
			`/api/documents/${documentId}/messages`,
			{ body: "@chopin read this", attachments: [{ name: "controls.txt", data: b64(controls) }] },
			bob,
		);
		const start = await socket.nextOf("start");
		socket.send({ type: "started", session: start.session });
		const turn = await socket.nextOf("turn");
		expect((await posting).status).toBe(201);
		const shown = /only its first (\d+) bytes fit in this turn/.exec(turn.prompt);
		expect(shown).not.toBeNull();
		expect(Number(shown![1])).toBeGreaterThan(150_000);
		expect(Number(shown![1])).toBeLessThan(1_000_000);
		expect(
			turn.prompt.startsWith('@bob: @chopin read this\n\n<file name="controls.txt">\n\u0001\u0001'),
		).toBe(true);
		expect(turn.prompt).toContain("[controls.txt is 1000000 bytes;");
		await end(f, socket, documentId, turn, "finished");
		expect((await f.chat(documentId)).at(-1)).toMatchObject({ role: "planner", status: "done" });
	});
});
