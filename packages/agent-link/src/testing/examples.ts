/**
 * The spec's own JSON examples (spec/agent-connection.md), with the empty strings filled in, for
 * the tests of every schema. Each key names the message or shape it shows.
 */

import type { Attachment } from "../schemas/attachments";
import type { Catalog } from "../schemas/catalog";
import type { ClientMessage, ClientMessageType } from "../schemas/client-messages";
import type { StreamPart, StreamPartType, Usage } from "../schemas/parts";
import type { Question, QuestionnaireAnswer } from "../schemas/questions";
import type { DeltaRunCard, FullRunCard, Stage } from "../schemas/runs";
import type { ServerMessage, ServerMessageType } from "../schemas/server-messages";

type ByType<U extends { type: string }, K extends string> = { [T in K]: Extract<U, { type: T }> };

const digest = `sha256:${"ab12".repeat(16)}`;

export const usage: Usage = {
	inputTokens: { total: 1200, noCache: 200, cacheRead: 1000, cacheWrite: 0 },
	outputTokens: { total: 300, text: 250, reasoning: 50 },
};

export const parts = {
	"stream-start": { type: "stream-start", modelId: "gpt-5.1" },
	"text-start": { type: "text-start", id: "txt-1" },
	"text-delta": { type: "text-delta", id: "txt-1", delta: "Here is the plan." },
	"text-end": { type: "text-end", id: "txt-1" },
	"reasoning-start": { type: "reasoning-start", id: "r-1" },
	"reasoning-delta": { type: "reasoning-delta", id: "r-1", delta: "The reader wants a summary." },
	"reasoning-end": { type: "reasoning-end", id: "r-1" },
	"tool-input-start": {
		type: "tool-input-start",
		id: "call-1",
		toolName: "run_tests",
		providerExecuted: true,
		dynamic: true,
		title: "Run the tests",
	},
	"tool-input-delta": { type: "tool-input-delta", id: "call-1", delta: '{"filter":' },
	"tool-input-end": { type: "tool-input-end", id: "call-1" },
	"tool-call": {
		type: "tool-call",
		toolCallId: "call-1",
		toolName: "run_tests",
		input: "{}",
		providerExecuted: true,
		dynamic: true,
	},
	"tool-result": {
		type: "tool-result",
		toolCallId: "call-1",
		toolName: "run_tests",
		result: { passed: 12 },
		isError: true,
		preliminary: true,
		dynamic: true,
	},
	"finish-step": { type: "finish-step", finishReason: { unified: "stop", raw: "end_turn" }, usage },
	finish: { type: "finish", finishReason: { unified: "stop", raw: "end_turn" }, totalUsage: usage },
	error: { type: "error", error: "The model provider is unavailable." },
} satisfies ByType<StreamPart, StreamPartType>;

export const questions = {
	questionnaire: {
		method: "questionnaire",
		params: {
			questions: [
				{
					question: "Which database should the pilot use?",
					header: "Storage",
					options: [
						{
							label: "PostgreSQL",
							description: "One server for every node.",
							preview: "```mermaid\ngraph TD\n```",
						},
						{ label: "SQLite", description: "A file per node." },
					],
					multiSelect: true,
				},
			],
		},
	},
	confirm: { method: "confirm", title: "Ship it?", message: "The pilot starts on Monday." },
	select: { method: "select", title: "Rollout", choices: ["A small pilot", "Everyone at once"] },
	input: { method: "input", title: "Name the project", placeholder: "A short name" },
	editor: { method: "editor", title: "Edit the summary", initial: "The pilot runs for a month." },
	/** The Card text example. */
	cardText: {
		method: "questionnaire",
		params: {
			questions: [
				{
					question: "Confirm the earlier answers\n\n- Storage: PostgreSQL\n- Rollout: a small pilot",
					header: "Confirm",
					options: [{ label: "Confirm all", description: "" }],
				},
			],
		},
	},
} satisfies Record<string, Question>;

export const answers = {
	option: {
		questionIndex: 0,
		question: "Which database?",
		kind: "option",
		answer: "PostgreSQL",
		preview: "A diagram",
	},
	multi: {
		questionIndex: 0,
		question: "Which database?",
		kind: "multi",
		answer: null,
		selected: ["PostgreSQL"],
	},
	custom: { questionIndex: 0, question: "Which database?", kind: "custom", answer: "MySQL, SQLite" },
	chat: { questionIndex: 0, question: "Which database?", kind: "chat", answer: "Whatever is cheapest" },
} satisfies Record<string, QuestionnaireAnswer>;

export const stage: Stage = {
	id: "stage-1",
	name: "Write the migration",
	parentIds: ["stage-0"],
	kind: "tool",
	status: "running",
	started: 1_760_000_000,
	ended: 1_760_000_060,
};

export const fullCard: FullRunCard = {
	id: "run-1",
	name: "Migrate the store",
	status: "running",
	started: 1_760_000_000,
	updated: 1_760_000_100,
	ended: 1_760_000_200,
	stages: [stage],
	earlierStages: 3,
	waiting: 1,
};

export const deltaCard: DeltaRunCard = {
	id: "run-1",
	name: "Migrate the store",
	status: "running",
	started: 1_760_000_000,
	updated: 1_760_000_100,
	ended: 1_760_000_200,
	stagesDelta: true,
	stages: [stage],
	waiting: 0,
};

export const attachment: Attachment = {
	id: "att-1",
	name: "notes.md",
	kind: "file",
	mediaType: "text/plain",
	size: 5,
	data: "aGVsbG8=",
};

export const catalog: Catalog = {
	models: {
		available: [
			{
				id: "claude-sonnet-4",
				name: "Claude Sonnet 4",
				provider: { id: "anthropic", name: "Anthropic" },
				description: "Fast and careful.",
				thinkingLevels: ["off", "low", "high"],
				inputTypes: ["text", "image"],
			},
		],
		default: { id: "claude-sonnet-4", thinkingLevel: "low" },
	},
	commands: [{ name: "review", description: "Review the plan", kind: "skill" }],
};

/** Every client-to-server example, keyed by type. */
export const clientMessages = {
	attach: {
		type: "attach",
		version: 1,
		document: "https://chopin.example/octo-org/score/plan",
		checkout: { origin: "https://github.com/octo-org/score.git", branch: "main", head: "4f2c9e1" },
	},
	started: { type: "started", session: "s1" },
	"start-failed": { type: "start-failed", session: "s1", message: "The model is not configured." },
	tools: { type: "tools", session: "s1", turn: "t1", names: ["run_tests"] },
	part: { type: "part", session: "s1", turn: "t1", part: parts["text-delta"] },
	"host-tool-call": {
		type: "host-tool-call",
		session: "s1",
		turn: "t1",
		toolCallId: "call-2",
		toolName: "read_plan",
		input: "{}",
	},
	"turn-end": { type: "turn-end", session: "s1", turn: "t1", status: "finished", message: "Done." },
	"input-request": {
		type: "input-request",
		request: "req-1",
		session: "s1",
		workflowRunId: "run-1",
		workflowStageId: "stage-1",
		rootRunId: "run-0",
		block: { index: 0, digest },
		input: questions.questionnaire,
	},
	"input-cancel": { type: "input-cancel", request: "req-1" },
	runs: { type: "runs", session: "s1", active: ["run-1"], paused: [], cards: [fullCard] },
	"control-result": { type: "control-result", request: "stop-1", ok: true, message: "Paused." },
	detach: { type: "detach" },
	resume: { type: "resume", sessions: [{ session: "s1", requests: ["req-1"] }] },
	"input-received": { type: "input-received", request: "req-1" },
	capabilities: { type: "capabilities", catalog },
} satisfies ByType<ClientMessage, ClientMessageType>;

/** Every server-to-client example, keyed by type. */
export const serverMessages = {
	attached: {
		type: "attached",
		version: 1,
		document: {
			id: "doc-1",
			title: "Score plan",
			repository: "octo-org/score",
			url: "https://chopin.example/octo-org/score/plan",
		},
		features: ["run-stage-deltas"],
	},
	refused: {
		type: "refused",
		code: "planner-attached",
		message: "octocat is connected to this document. A document has one agent connected at a time.",
	},
	start: { type: "start", session: "s1", mode: "planner" },
	fork: { type: "fork", session: "s2", mode: "planner", from: { session: "s1", turn: "t1" } },
	turn: {
		type: "turn",
		session: "s1",
		turn: "t1",
		prompt: "@ana: Hey there!",
		instructions: "You are the Planner.",
		model: "claude-sonnet-4",
		thinkingLevel: "low",
		attachments: [attachment],
		message: "0f8c6a2e",
		retry: true,
		tools: [{ name: "read_plan", description: "Read the plan.", inputSchema: { type: "object" } }],
		responseFormat: { type: "json", schema: { type: "object" }, name: "plan", description: "The plan." },
	},
	abort: { type: "abort", session: "s1", turn: "t1" },
	steer: { type: "steer", request: "steer-1", session: "s1", turn: "t1", prompt: "@bo: use SQLite" },
	"host-tool-result": {
		type: "host-tool-result",
		session: "s1",
		turn: "t1",
		toolCallId: "call-2",
		output: { error: "The turn has ended." },
		isError: true,
	},
	"input-result": { type: "input-result", request: "req-1", status: "answered", value: true },
	stop: { type: "stop", request: "stop-1", session: "s1", run: "run-1" },
	resume: { type: "resume", request: "resume-1", session: "s1", run: "run-1" },
	destroy: { type: "destroy", session: "s1" },
	restarting: { type: "restarting", reconnectWithinMs: 10_000 },
	error: { type: "error", code: "malformed-message", message: "The frame is not valid JSON." },
	resumed: { type: "resumed", sessions: [{ session: "s1", requests: ["req-1"] }] },
} satisfies ByType<ServerMessage, ServerMessageType>;

/** The Retrying a failed turn examples. */
export const retryTurns = [
	{ type: "turn", session: "s2", turn: "t2", prompt: "@ana: Hey there!", message: "0f8c…", tools: [] },
	{
		type: "turn",
		session: "s3",
		turn: "t3",
		prompt: "@ana: Hey there!",
		message: "0f8c…",
		retry: true,
		tools: [],
	},
] as const;

export const toolError = {
	error: {
		code: "no-repository-credential",
		kind: "NoRepositoryCredential",
		message: "No credential for the repository.",
	},
};

export const toolImages = {
	content: [
		{ type: "text", text: "Here is the diagram." },
		{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png", alt: "A diagram", caption: "Figure 1" },
	],
};
