// capability-catalog commands (spec: Capability catalog, commands): a message that runs one of the attached
// client's commands is checked against its last report when sent, refused when unknown, and reaches the client
// as an ordinary turn's prompt: /name args, or a request to start the workflow of that name.
import { afterEach, describe, expect, test } from "bun:test";
import type { Catalog } from "@chopin/agent-link";
import { AgentFixture } from "../testing/agent-fixture";
import type { AgentSocket } from "../testing/agent-socket";
import type { CookieJar } from "../testing/sign-in";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

const CATALOG: Catalog = {
	commands: [
		{ name: "Review-PR", description: "Review a pull request", kind: "skill" },
		{ name: "summarize", kind: "prompt" },
		{ name: "release train", kind: "workflow" },
		{ name: "lint", kind: "" },
	],
};

async function attached(catalog?: Catalog, features = "capability-catalog") {
	f = await AgentFixture.start();
	const doc = await f.createDocument();
	const jar = await f.signIn("bob");
	await f.signIn("alice");
	const { socket } = await f.attach("alice", doc.id, { features });
	if (catalog) {
		socket.send({ type: "capabilities", catalog });
		await f.sync(socket);
	}
	return { f, socket, documentId: doc.id, jar };
}

function post(
	f: AgentFixture,
	documentId: string,
	jar: CookieJar,
	body: string,
	command?: { name: string; kind: string },
) {
	return f.request(
		"POST",
		`/api/documents/${documentId}/messages`,
		{ body, ...(command && { command }) },
		jar,
	);
}

async function turnFor(socket: AgentSocket) {
	const start = await socket.nextOf("start");
	socket.send({ type: "started", session: start.session });
	return socket.nextOf("turn");
}

describe("commands", () => {
	test("a skill, a prompt and any other kind reach the client as /name args, as the client spelled the name", async () => {
		const { f, socket, documentId, jar } = await attached(CATALOG);
		const res = await post(f, documentId, jar, "  #42 please ", { name: "Review-PR", kind: "skill" });
		expect(res.status).toBe(201);
		expect((await res.json()).message).toMatchObject({
			role: "person",
			authorLogin: "bob",
			body: "/Review-PR #42 please",
		});
		const turn = await turnFor(socket);
		expect(turn.prompt).toBe("/Review-PR #42 please");
		socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
		await f.until(() => f.ctx.planner.status(documentId).state === "attached", "the Planner to be idle");

		// No words after it: /name alone. An empty kind is a kind like any other.
		expect((await post(f, documentId, jar, "", { name: "lint", kind: "" })).status).toBe(201);
		expect((await turnFor(socket)).prompt).toBe("/lint");
	});

	test("a workflow: a request to start the workflow of that name, with the words after it as its input", async () => {
		const { f, socket, documentId, jar } = await attached(CATALOG);
		expect(
			(await post(f, documentId, jar, "v2.3 to staging", { name: "release train", kind: "workflow" })).status,
		).toBe(201);
		const turn = await turnFor(socket);
		expect(turn.prompt).toBe('Start the workflow "release train" with this input:\n\nv2.3 to staging');
		expect((await f.chat(documentId)).at(0)?.body).toBe("/release train v2.3 to staging");
	});

	test("a name or kind the last report does not list is refused and nothing is posted", async () => {
		const { f, socket, documentId, jar } = await attached(CATALOG);
		for (const command of [
			{ name: "review-pr", kind: "skill" },
			{ name: "Review-PR", kind: "workflow" },
			{ name: "deploy", kind: "skill" },
		]) {
			const res = await post(f, documentId, jar, "now", command);
			expect(res.status).toBe(409);
			const body = await res.json();
			expect(body.code).toBe("command-unknown");
			expect(body.message).toContain(`/${command.name}`);
		}
		// A later report without it: refused too.
		socket.send({ type: "capabilities", catalog: { commands: [{ name: "summarize", kind: "prompt" }] } });
		await f.sync(socket);
		expect((await post(f, documentId, jar, "x", { name: "Review-PR", kind: "skill" })).status).toBe(409);
		expect(await f.chat(documentId)).toEqual([]);
		expect(socket.pending.filter((m) => m.type === "start")).toEqual([]);
	});

	test("a client that reported no commands, or did not ask for the feature, runs none", async () => {
		const { f, documentId, jar } = await attached(undefined, "");
		const res = await post(f, documentId, jar, "now", { name: "summarize", kind: "prompt" });
		expect(res.status).toBe(409);
		expect((await res.json()).code).toBe("command-unknown");
		expect(await f.chat(documentId)).toEqual([]);
	});
});
