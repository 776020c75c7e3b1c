// Spec "Option previews", with and without decision-option-previews: the preview kept as the option's own field
// (and carried by its answer) or joined to its description; upload_plan_image in the turn's tools or not, a call
// to it as an unknown tool without the feature, and an own tool of that name only where it is not offered.
import { afterEach, describe, expect, test } from "bun:test";
import type { Question } from "@chopin/agent-link";
import { AgentFixture } from "../testing/agent-fixture";
import { HOST_TOOL_NAMES, offeredTools } from "./tools/registry";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

const FEATURE = "decision-option-previews" as const;

async function inTurn(features?: string) {
	f = await AgentFixture.start();
	const doc = await f.createDocument({ source: "# Plan\n\nWe pick a layout.\n" });
	await f.signIn("alice");
	const { socket, attached } = await f.attach("alice", doc.id, features === undefined ? {} : { features });
	const turn = await f.chatTurn(socket, doc.id, "bob");
	const ask = (request: string, input: Question) =>
		socket.send({ type: "input-request", request, session: turn.session, input });
	const decisionOf = async (request: string) => {
		await f!.until(
			async () => !!(await f!.ctx.domain.decisions.findByRequest(doc.id, request)),
			`the Decision of ${request}`,
		);
		return (await f!.ctx.domain.decisions.findByRequest(doc.id, request))!;
	};
	return { f, socket, attached, turn, ask, decisionOf, documentId: doc.id };
}

const GRID = "```mermaid\ngraph TD; A-->B\n```";
const layouts: Question = {
	method: "questionnaire",
	params: {
		questions: [
			{
				question: "Which layout?",
				header: "Layout",
				options: [
					{ label: "Grid", description: "Cards in rows", preview: GRID },
					{ label: "List", description: "One per line", preview: "| a |\n| - |\n| b |" },
				],
			},
		],
	},
};

const optionsOf = (question: Question) =>
	(question as Extract<Question, { method: "questionnaire" }>).params.questions[0]!.options;

describe("with decision-option-previews", () => {
	test("attached grants the feature and the turn offers upload_plan_image", async () => {
		const { attached, turn } = await inTurn(FEATURE);
		expect(attached.features).toEqual([FEATURE]);
		expect(turn.tools.map((t) => t.name)).toContain("upload_plan_image");
		const tool = turn.tools.find((t) => t.name === "upload_plan_image")!;
		expect(tool.inputSchema).toMatchObject({ type: "object", required: ["data", "mimeType", "alt"] });
	});

	test("an option's preview is kept as its own field, verbatim, and the chosen option's answer carries it", async () => {
		const { f, socket, ask, decisionOf } = await inTurn(FEATURE);
		ask("q1", layouts);
		const decision = await decisionOf("q1");
		expect(optionsOf(decision.question)).toEqual(optionsOf(layouts));
		await f.ctx.domain.decisions.answer(decision.id, {
			answer: { kind: "option", label: "Grid" },
			by: "bob",
		});
		expect(await socket.expect("input-result")).toEqual({
			type: "input-result",
			request: "q1",
			status: "answered",
			value: {
				answers: [
					{ questionIndex: 0, question: "Which layout?", kind: "option", answer: "Grid", preview: GRID },
				],
				cancelled: false,
			},
		});
	});

	test("a written answer to a question with previews is chat", async () => {
		const { f, socket, ask, decisionOf } = await inTurn(FEATURE);
		ask("q1", layouts);
		const decision = await decisionOf("q1");
		await f.ctx.domain.decisions.answer(decision.id, {
			answer: { kind: "written", text: "Both" },
			by: "bob",
		});
		const result = await socket.expect("input-result");
		expect(result.value).toMatchObject({ answers: [{ kind: "chat", answer: "Both" }] });
	});

	test("an isolated session, which only reads, is not offered upload_plan_image", () => {
		const names = (mode: "planner" | "isolated") =>
			offeredTools(mode, new Set([FEATURE])).map((tool) => tool.name);
		expect(names("planner")).toContain("upload_plan_image");
		expect(names("isolated")).not.toContain("upload_plan_image");
		expect(HOST_TOOL_NAMES.has("upload_plan_image")).toBe(false);
	});

	test("an own tool may not take the offered upload_plan_image's name", async () => {
		const { socket, turn } = await inTurn(FEATURE);
		socket.send({ type: "tools", session: turn.session, turn: turn.turn, names: ["upload_plan_image"] });
		expect(await socket.expect("abort")).toMatchObject({ turn: turn.turn });
	});
});

describe("without decision-option-previews", () => {
	test("attached grants nothing and the turn's tools do not name upload_plan_image", async () => {
		const { attached, turn } = await inTurn();
		expect(attached.features).toBeUndefined();
		expect(turn.tools.map((t) => t.name)).not.toContain("upload_plan_image");
	});

	test("asking for other features only does not grant it either", async () => {
		const { attached, turn } = await inTurn("run-stage-deltas");
		expect(attached.features).toEqual(["run-stage-deltas"]);
		expect(turn.tools.map((t) => t.name)).not.toContain("upload_plan_image");
	});

	test("the preview is joined to the description; the answer carries none, and written is custom", async () => {
		const { f, socket, ask, decisionOf } = await inTurn();
		ask("q1", layouts);
		const first = await decisionOf("q1");
		expect(optionsOf(first.question)).toEqual([
			{ label: "Grid", description: `Cards in rows\n\n${GRID}` },
			{ label: "List", description: "One per line\n\n| a |\n| - |\n| b |" },
		]);
		await f.ctx.domain.decisions.answer(first.id, { answer: { kind: "option", label: "Grid" }, by: "bob" });
		expect((await socket.expect("input-result")).value).toEqual({
			answers: [{ questionIndex: 0, question: "Which layout?", kind: "option", answer: "Grid" }],
			cancelled: false,
		});
		ask("q2", layouts);
		const second = await decisionOf("q2");
		await f.ctx.domain.decisions.answer(second.id, { answer: { kind: "written", text: "Both" }, by: "bob" });
		expect((await socket.expect("input-result")).value).toMatchObject({
			answers: [{ kind: "custom", answer: "Both" }],
		});
	});

	test("a call to upload_plan_image is a call to an unknown tool, and stores nothing", async () => {
		const { f, socket, turn, documentId } = await inTurn();
		socket.send({
			type: "host-tool-call",
			session: turn.session,
			turn: turn.turn,
			toolCallId: "c1",
			toolName: "upload_plan_image",
			input: JSON.stringify({ data: "iVBORw0KGgo=", mimeType: "image/png", alt: "A chart" }),
		});
		expect(await socket.nextOf("host-tool-result")).toMatchObject({
			toolCallId: "c1",
			isError: true,
			output: { error: 'No host tool named "upload_plan_image" is offered in this turn.' },
		});
		expect(await f.ctx.domain.images.list(documentId)).toEqual([]);
	});

	test("an own tool may be named upload_plan_image: the turn goes on", async () => {
		const { f, socket, turn, documentId } = await inTurn();
		socket.send({ type: "tools", session: turn.session, turn: turn.turn, names: ["upload_plan_image"] });
		socket.send({
			type: "part",
			session: turn.session,
			turn: turn.turn,
			part: {
				type: "tool-call",
				toolCallId: "own-1",
				toolName: "upload_plan_image",
				input: "{}",
				providerExecuted: true,
			},
		});
		socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
		expect(await socket.expect("destroy")).toEqual({ type: "destroy", session: turn.session });
		await f.until(async () => (await f!.chat(documentId)).at(-1)?.status === "done", "the reply to end");
		expect((await f.chat(documentId)).at(-1)!.tools).toMatchObject([{ name: "upload_plan_image" }]);
	});
});
