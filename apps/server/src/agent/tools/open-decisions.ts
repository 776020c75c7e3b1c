// open_decisions: the document's Decisions still waiting for an answer, and current_plan (the plan as JSON,
// without its source and blocks when over 8,000 bytes).
import { z } from "zod";
import { planSummaryJson } from "../../documents/plan-summary";
import { documentUrl } from "../document-ref";
import { type HostToolDefinition, ToolInputError, zodIssue } from "./registry";

const argsSchema = z.strictObject({});

export const openDecisions: HostToolDefinition<Record<string, never>> = {
	name: "open_decisions",
	description:
		"List this document's open Decisions (questions members have not answered yet, with any answers given so far) and current_plan, the document as JSON (its source and blocks are left out when over 8,000 bytes; read it with read_plan then).",
	inputSchema: z.toJSONSchema(argsSchema) as Record<string, unknown>,
	writes: false,
	parse(input) {
		const parsed = argsSchema.safeParse(input ?? {});
		if (!parsed.success) throw new ToolInputError(zodIssue(parsed.error));
		return parsed.data as Record<string, never>;
	},
	async run(_args, ctx) {
		const [doc, open] = await Promise.all([
			ctx.domain.documents.read(ctx.documentId),
			ctx.domain.decisions.list(ctx.documentId),
		]);
		return {
			decisions: open.map((decision) => ({
				id: decision.id,
				request: decision.requestId,
				question: decision.question,
				block: decision.link,
				answers: decision.answers.map((a) => ({ questionIndex: a.questionIndex, answer: a.answer })),
				askedAt: new Date(decision.createdAt).toISOString(),
			})),
			current_plan: planSummaryJson({
				id: doc.id,
				title: doc.title,
				url: documentUrl(ctx.publicUrl, doc.id),
				revision: doc.revision,
				source: doc.source,
			}),
		};
	},
};
