/**
 * The tools of Chopin's MCP endpoint (/mcp): their names, descriptions and input shapes, shared by the
 * server that serves them and the tests and agents that call them. A run's agent reports through the
 * run tools with its run credential; invoke_planner asks a document's Planner (docs/mcp.md).
 */
import { z } from "zod";
import { BRIEF_MAX, commitSchema, runKindSchema } from "../machine/runs";
import { chars } from "../schemas/fields";

export const MCP_PATH = "/mcp";
export const MCP_SERVER_NAME = "chopin";

/** The longest message invoke_planner takes (a Chat message's limit). */
export const INVOKE_MESSAGE_MAX = 16_000;
/** A result's summary: an investigation's answer can be long. */
export const SUMMARY_MAX = 16_000;

export const STAGE_REPORT_STATUSES = ["pending", "running", "completed", "failed", "skipped"] as const;

/** Each tool's input shape (a zod raw shape, as the MCP SDK's registerTool takes it). */
export const mcpToolInputs = {
	read_brief: {},
	report_progress: {
		stage: chars(1, 200).describe(
			"The stage's name, as a person reads it; the same name updates the same stage.",
		),
		status: z.enum(STAGE_REPORT_STATUSES),
		detail: chars(0, 4000).optional().describe("One or two sentences on what happened."),
	},
	report_blocker: {
		message: chars(1, 4000).describe("What stops the work and what a person must do about it."),
	},
	report_pull_request: {
		url: z
			.url({ protocol: /^https?$/ })
			.max(2048)
			.describe("The pull request's web address."),
		title: chars(0, 300).optional(),
	},
	report_result: {
		outcome: z.enum(["succeeded", "failed"]),
		summary: chars(1, SUMMARY_MAX).describe(
			"What was done (a build) or the answer (an investigation), in Markdown.",
		),
		branch: chars(1, 256).optional().describe("The branch the work is on, when it pushed one."),
		commit: commitSchema.optional().describe("The last commit of the work."),
	},
	invoke_planner: {
		message: chars(1, INVOKE_MESSAGE_MAX).describe("What to ask or tell the document's Planner."),
		as: z
			.enum(["agent", "system"])
			.optional()
			.describe(
				'"agent" (the default): a question from this coding agent, shown in Chat. "system": an automatic follow-up ' +
					"from Chopin (a run ended), allowed only to the account holding the Planner.",
			),
		document: chars(1, 2048)
			.optional()
			.describe("The document's id or URL; a run's credential may leave it out (its own document)."),
	},
} as const;

export type McpToolName = keyof typeof mcpToolInputs;
export const RUN_TOOLS: readonly McpToolName[] = [
	"read_brief",
	"report_progress",
	"report_blocker",
	"report_pull_request",
	"report_result",
];

export const mcpToolDescriptions: Record<McpToolName, string> = {
	read_brief:
		"Read this run's brief: what to build or find out, the document's plan, the base commit and the branch to work on. Call it first.",
	report_progress:
		"Report a stage of the work (started, completed, failed or skipped), shown live on the document's page.",
	report_blocker:
		"Report what stops the work and needs a person (missing access, an unclear requirement). The run shows it; end your turn afterwards if you cannot go on.",
	report_pull_request: "Report a pull request this run opened, so the document's page links to it.",
	report_result:
		"Report the run's outcome and a summary (for an investigation, the answer). Call it once, at the end.",
	invoke_planner:
		"Ask the document's Planner (Chopin's agent for the document) a question, or tell it something; returns its reply.",
};

/** What read_brief returns (as JSON text). */
export const briefResultSchema = z.strictObject({
	run: z.strictObject({
		id: z.string(),
		kind: runKindSchema,
		base: commitSchema,
		branch: z.string(),
		requestedBy: z.string(),
	}),
	document: z.strictObject({ id: z.string(), title: z.string(), url: z.string(), repository: z.string() }),
	brief: chars(1, BRIEF_MAX),
	/** The document's Markdown: the plan a build implements, the context an investigation reads. */
	plan: z.string(),
	/** What Chopin asks of every run of this kind (push or not, name the requester in a pull request). */
	instructions: z.string(),
});
export type BriefResult = z.infer<typeof briefResultSchema>;

/**
 * A refused or failed tool call's content (isError: true), as JSON text: a stable code, one sentence,
 * and a hint where there is something to do.
 */
export const mcpToolErrorSchema = z.strictObject({
	code: z.string(),
	message: z.string(),
	hint: z.string().optional(),
});
export type McpToolError = z.infer<typeof mcpToolErrorSchema>;
