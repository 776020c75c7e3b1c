// Chopin's host tools as a turn offers them: each with a JSON Schema, a description, a parser for its input
// and a run function. read_plan, read_child and open_decisions read; edit_plan and upload_plan_image (only
// with decision-option-previews) write.
import type { Feature, HostTool } from "@chopin/agent-link";
import type { z } from "zod";
import type { Domain } from "../../domain";
import type { StoredImage } from "../../images/service";
import { editPlan } from "./edit-plan";
import { openDecisions } from "./open-decisions";
import { readChild, readPlan } from "./read";
import { uploadPlanImage } from "./upload-plan-image";

/** What a host tool runs with: the attached document, the domain, and a signal that aborts when the turn ends. */
export interface HostToolContext {
	readonly documentId: string;
	readonly repository: string;
	readonly publicUrl: string;
	readonly domain: Domain;
	readonly signal: AbortSignal;
	/** An image the call stored: Chat shows it on the turn's message, once this resolves. */
	imageStored?(image: StoredImage, alt: string): Promise<void>;
}

/**
 * A host tool's output as sent in host-tool-result.output: any JSON (the reading tools send text).
 * Encoding the result checks it is JSON and fits a frame.
 */
export type ToolOutput = unknown;

export interface HostToolDefinition<A = unknown> {
	readonly name: string;
	readonly description: string;
	readonly inputSchema: Record<string, unknown>;
	/** Only planner sessions get tools that change the document; isolated ones read. */
	readonly writes: boolean;
	/** Offered only to a link that negotiated this feature. */
	readonly feature?: Feature;
	/** Checks the arguments (already JSON); throws ToolInputError saying what is wrong. */
	parse(input: unknown): A;
	run(args: A, ctx: HostToolContext): Promise<ToolOutput>;
}

/** Arguments that do not fit the tool: answered as invalid input. */
export class ToolInputError extends Error {
	override readonly name = "ToolInputError";
}

/** The first issue of a zod error as one sentence, for an invalid-input result. */
export function zodIssue(error: z.ZodError): string {
	const issue = error.issues[0];
	if (!issue) return "The input is not valid.";
	const path = issue.path.length ? `${issue.path.join(".")}: ` : "";
	return `${path}${issue.message}`;
}

export const HOST_TOOLS: readonly HostToolDefinition[] = [
	readPlan as HostToolDefinition,
	readChild as HostToolDefinition,
	editPlan as HostToolDefinition,
	openDecisions as HostToolDefinition,
	uploadPlanImage as HostToolDefinition,
];

/**
 * The names an own tool may never take. A feature's tool is not among them: a client that did not ask
 * for the feature has never heard of it, and may have a tool of that name; a turn that offers it
 * reserves it through its offered tools.
 */
export const HOST_TOOL_NAMES: ReadonlySet<string> = new Set(
	HOST_TOOLS.filter((tool) => !tool.feature).map((tool) => tool.name),
);

export function findHostTool(name: string): HostToolDefinition | undefined {
	return HOST_TOOLS.find((tool) => tool.name === name);
}

/** The tools a turn offers, as the turn message lists them: a feature's only to a link that negotiated it. */
export function offeredTools(
	mode: "planner" | "isolated",
	features: ReadonlySet<Feature> = new Set(),
): HostTool[] {
	const offered = (tool: HostToolDefinition) =>
		(mode === "planner" || !tool.writes) && (!tool.feature || features.has(tool.feature));
	return HOST_TOOLS.filter(offered).map((tool) => ({
		name: tool.name,
		description: tool.description,
		inputSchema: tool.inputSchema as HostTool["inputSchema"],
	}));
}
