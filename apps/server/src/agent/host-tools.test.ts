// Spec "host-tool-call" / "host-tool-result" and "Reading a large document": read_plan paging, read_child,
// edit_plan's new revision and live update, open_decisions, every error result, the permission policy's
// execution-denied, and a call still running when its turn ends.
import { afterEach, describe, expect, test } from "bun:test";
import { JSON_TOO_DEEP_MESSAGE } from "@chopin/agent-link/json-depth";
import { splitBlocks } from "../documents/blocks";
import { AgentFixture } from "../testing/agent-fixture";
import type { AgentSocket } from "../testing/agent-socket";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

const SOURCE = "# Rollout plan\n\nWe ship in two steps.\n\n## Steps\n\n- one\n- two\n";

async function inTurn(mode: "local" | "github" = "local", source = SOURCE) {
	f = await AgentFixture.start({ mode });
	const doc = await f.createDocument({ source });
	await f.signIn(f.cast.admin);
	const { socket } = await f.attach(f.cast.admin, doc.id);
	const turn = await f.chatTurn(socket, doc.id, f.cast.writer);
	let n = 0;
	const call = async (toolName: string, input: unknown) => {
		const toolCallId = `call-${++n}`;
		socket.send({
			type: "host-tool-call",
			session: turn.session,
			turn: turn.turn,
			toolCallId,
			toolName,
			input: typeof input === "string" ? input : JSON.stringify(input),
		});
		const result = await socket.nextOf("host-tool-result");
		expect(result).toMatchObject({ session: turn.session, turn: turn.turn, toolCallId });
		return result;
	};
	return { f, socket, turn, call, documentId: doc.id };
}

/** The text after the read view's header and lists. */
const textOf = (output: unknown) => {
	const view = output as string;
	return view.slice(view.indexOf("\n", view.indexOf("--- the document's text from ")) + 1);
};

describe("read_plan and read_child", () => {
	test("read_plan returns the read view's text: header, blocks, then the document verbatim", async () => {
		const { call, documentId, f } = await inTurn();
		const result = await call("read_plan", {});
		expect(result.isError).toBeUndefined();
		const text = result.output as string;
		expect(text).toStartWith(
			`document: Rollout plan\nid: ${documentId}\nurl: ${f.publicUrl}/d/${documentId}\nrevision: 0\n`,
		);
		expect(text).toContain("next: none, this is the end of the document");
		expect(textOf(text)).toBe(SOURCE);
	});

	test("paging with offset, limit and column follows next: and returns every character once", async () => {
		const long = `${"word ".repeat(6000)}end`;
		const source = `# Big\n\n${Array.from({ length: 400 }, (_, i) => `Paragraph ${i} says something.`).join("\n\n")}\n\n${long}\n`;
		const { call } = await inTurn("local", source);
		let args: Record<string, unknown> = {};
		let text = "";
		for (let page = 0; page < 50; page++) {
			const output = (await call("read_plan", args)).output as string;
			expect(Buffer.byteLength(output)).toBeLessThanOrEqual(16_000);
			text += textOf(output);
			const next = /^next: read_plan (\{.*\})$/m.exec(output);
			if (!next) break;
			args = JSON.parse(next[1]!);
		}
		expect(text).toBe(source);
		const limited = (await call("read_plan", { offset: 3, limit: 2 })).output as string;
		expect(limited).toContain("stopped at limit 2 lines");
		expect(limited).toContain('next: read_plan {"offset":5,"limit":2}');
	});

	test("arguments out of range or of the wrong shape are error results", async () => {
		const { call } = await inTurn();
		expect(await call("read_plan", { offset: 0 })).toMatchObject({
			isError: true,
			output: { error: expect.stringContaining("Invalid input for read_plan: offset") },
		});
		expect(await call("read_plan", { offset: 99 })).toMatchObject({
			isError: true,
			output: { error: expect.stringContaining("offset 99 is past the end") },
		});
		expect(await call("read_plan", { page: 2 })).toMatchObject({ isError: true });
		expect(await call("read_plan", "{not json")).toMatchObject({
			isError: true,
			output: { error: "The input is not valid JSON: send the tool's arguments as a JSON object." },
		});
		expect(await call("read_plan", `{"offset":${"[".repeat(9000)}${"]".repeat(9000)}}`)).toMatchObject({
			isError: true,
			output: { error: `${JSON_TOO_DEEP_MESSAGE} Send the tool's arguments as a flatter JSON object.` },
		});
	});

	test("read_child reads another document of the same repository, and only that", async () => {
		const { call, f, documentId } = await inTurn();
		const child = await f.createDocument({ title: "Appendix", source: "# Appendix\n\nDetails.\n" });
		const elsewhere = await f.createDocument({
			title: "Other repo",
			repository: "acme/other",
			source: "x\n",
		});
		const result = await call("read_child", { document: child.id });
		expect(result.output as string).toStartWith(`document: Appendix\nid: ${child.id}\n`);
		expect(textOf(result.output)).toBe("# Appendix\n\nDetails.\n");
		for (const id of [elsewhere.id, documentId, "nosuchdocument"]) {
			expect(await call("read_child", { document: id })).toMatchObject({
				isError: true,
				output: { error: expect.stringContaining("No other document") },
			});
		}
		expect(await call("read_child", {})).toMatchObject({ isError: true });
	});
});

describe("edit_plan", () => {
	test("block edits by digest make a new revision, published live with the new source", async () => {
		const { call, f, documentId } = await inTurn();
		const events = f.events(documentId);
		const [, paragraph] = splitBlocks(SOURCE);
		const result = await call("edit_plan", {
			edits: [
				{
					op: "replace",
					block: { index: 1, digest: paragraph!.digest },
					markdown: "We ship in three steps.",
				},
			],
		});
		expect(result.isError).toBeUndefined();
		expect(result.output).toMatchObject({
			revision: 1,
			changed: [expect.objectContaining({ index: 1, kind: "paragraph" })],
			removed: [{ index: 1, digest: paragraph!.digest }],
		});
		const doc = await f.ctx.domain.documents.get(documentId);
		expect(doc.source).toBe(SOURCE.replace("two steps", "three steps"));
		expect(events.find((e) => e.type === "document.updated")).toMatchObject({
			change: "source",
			source: doc.source,
			document: { revision: 1 },
		});
		// The same digest again: that block has changed since it was read.
		expect(
			await call("edit_plan", { edits: [{ op: "delete", block: { index: 1, digest: paragraph!.digest } }] }),
		).toMatchObject({
			isError: true,
			output: { error: expect.stringContaining("has changed since it was read") },
		});
		expect(await call("edit_plan", { edits: [] })).toMatchObject({
			isError: true,
			output: { error: expect.stringContaining("Invalid input for edit_plan") },
		});
	});

	test("a Work details row shows each host call", async () => {
		const { call, f, documentId, socket, turn } = await inTurn();
		await call("read_plan", { limit: 1 });
		await call("nope", {});
		socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
		await f.until(async () =>
			(await f.chat(documentId)).some((m) => m.role === "planner" && m.status === "done"),
		);
		const reply = (await f.chat(documentId)).find((m) => m.role === "planner")!;
		expect(reply.tools.map((t) => [t.name, t.status])).toEqual([
			["read_plan", "done"],
			["nope", "failed"],
		]);
	});
});

describe("open_decisions", () => {
	test("lists the open Decisions and current_plan", async () => {
		const { call, f, documentId, socket, turn } = await inTurn();
		socket.send({
			type: "input-request",
			request: "q1",
			session: turn.session,
			input: { method: "confirm", title: "Ship on Friday?", message: "" },
		});
		await f.until(async () => (await f.ctx.domain.decisions.list(documentId)).length === 1, "the Decision");
		const { output } = await call("open_decisions", {});
		expect(output).toMatchObject({
			decisions: [{ request: "q1", question: { method: "confirm", title: "Ship on Friday?" }, answers: [] }],
			current_plan: {
				id: documentId,
				title: "Rollout plan",
				revision: 0,
				source: SOURCE,
				source_omitted: false,
			},
		});
	});

	test("a result too large for one frame is an error result", async () => {
		const { call, f, documentId, socket, turn } = await inTurn();
		const big = (i: number) => ({
			type: "input-request",
			request: `big-${i}`,
			session: turn.session,
			input: {
				method: "questionnaire",
				params: {
					questions: Array.from({ length: 16 }, (_, q) => ({
						question: `Question ${q}`,
						header: `Q${q}`,
						options: Array.from({ length: 32 }, (_, o) => ({
							label: `${o}`.padEnd(1000, "l"),
							description: "d".repeat(1000),
						})),
					})),
				},
			},
		});
		for (const i of [1, 2, 3]) socket.send(big(i));
		await f.until(async () => (await f.ctx.domain.decisions.list(documentId)).length === 3, "the Decisions");
		expect(await call("open_decisions", {})).toMatchObject({
			isError: true,
			output: { error: expect.stringContaining("too large for one message") },
		});
	});
});

describe("errors and the permission policy", () => {
	test("a name outside the turn's tools is an error result", async () => {
		const { call } = await inTurn();
		expect(await call("upload_plan_image", {})).toEqual(
			expect.objectContaining({
				isError: true,
				output: { error: 'No host tool named "upload_plan_image" is offered in this turn.' },
			}),
		);
	});

	test("a call the permission policy refuses is answered execution-denied", async () => {
		const { call, f } = await inTurn("github");
		f.gh!.setPermission("score-team/score", "octocat", "read");
		const denied = await call("read_plan", {});
		expect(denied.isError).toBeUndefined();
		expect(denied.output).toEqual({
			type: "execution-denied",
			reason:
				"octocat no longer has push or administration access to score-team/score, or is no longer admitted to this Chopin server, so the connection was released.",
		});
	});

	test("GitHub failing during the permission check is an error result", async () => {
		const { call, f } = await inTurn("github");
		f.gh!.inject({ kind: "status", status: 502, pathPrefix: "/api/v3/repos", times: 3 });
		expect(await call("read_plan", {})).toMatchObject({
			isError: true,
			output: { error: expect.stringContaining("GitHub") },
		});
	});

	test("a call still running when its turn ends is stopped: no result is sent for it", async () => {
		const { f, socket, turn } = await inTurn("github");
		f.gh!.inject({ kind: "hang", pathPrefix: "/api/v3/repos" });
		socket.send({
			type: "host-tool-call",
			session: turn.session,
			turn: turn.turn,
			toolCallId: "slow",
			toolName: "read_plan",
			input: "{}",
		});
		await f.until(() => f.gh!.held > 0, "the permission check to reach GitHub");
		socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
		await socket.expect("destroy");
		f.gh!.releaseHeld();
		await f.sync(socket);
		expect(socket.received.some((m) => m.type === "host-tool-result" && m.toolCallId === "slow")).toBe(false);
	});
});

export type { AgentSocket };
