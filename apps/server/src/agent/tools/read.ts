// read_plan and read_child: the paged text view of the attached document, or of another document of the same
// repository (a "child" is any other document of that repository: documents have no parent link yet).
import { z } from "zod";
import type { DocumentSummary } from "../../documents/document-view";
import { type ReadArgs, readArgsSchema, renderReadView } from "../../documents/read-view";
import { documentUrl } from "../document-ref";
import { type HostToolContext, type HostToolDefinition, ToolInputError, zodIssue } from "./registry";

function parseWith<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
	const parsed = schema.safeParse(input ?? {});
	if (!parsed.success) throw new ToolInputError(zodIssue(parsed.error));
	return parsed.data;
}

const readDocument = (doc: DocumentSummary & { source: string }, publicUrl: string) => ({
	id: doc.id,
	title: doc.title,
	url: documentUrl(publicUrl, doc.id),
	revision: doc.revision,
	source: doc.source,
});

const PAGING = `Results are at most 16,000 bytes: a header (document, id, url, revision: <n>, size, shown, next:), the top-level blocks with their lines and digests, then the document's own lines verbatim after the line starting "--- the document's text from". Call the exact "next:" line to continue; each character comes back exactly once. Name blocks by the index and digest listed here in edit_plan and in questions.`;

export const readPlan: HostToolDefinition<ReadArgs> = {
	name: "read_plan",
	description: `Read this document (the plan) a page at a time. ${PAGING}`,
	inputSchema: z.toJSONSchema(readArgsSchema) as Record<string, unknown>,
	writes: false,
	parse: (input) => parseWith(readArgsSchema, input),
	async run(args, ctx: HostToolContext) {
		const doc = await ctx.domain.documents.read(ctx.documentId);
		return renderReadView(readDocument(doc, ctx.publicUrl), args, { tool: "read_plan" });
	},
};

const readChildArgsSchema = readArgsSchema.extend({
	document: z.string().min(1).max(128).describe("The id of another document of this repository."),
});
type ReadChildArgs = z.infer<typeof readChildArgsSchema>;

export const readChild: HostToolDefinition<ReadChildArgs> = {
	name: "read_child",
	description: `Read another document of this document's repository by its id, a page at a time. ${PAGING}`,
	inputSchema: z.toJSONSchema(readChildArgsSchema) as Record<string, unknown>,
	writes: false,
	parse: (input) => parseWith(readChildArgsSchema, input),
	async run({ document, ...args }, ctx: HostToolContext) {
		const summary = await ctx.domain.documents.find(document);
		const sameRepository = summary?.repository.toLowerCase() === ctx.repository.toLowerCase();
		if (!summary || !sameRepository || summary.id === ctx.documentId) {
			throw new Error(
				`No other document ${JSON.stringify(document.slice(0, 128))} exists in ${ctx.repository}; read this document with read_plan.`,
			);
		}
		const doc = await ctx.domain.documents.read(summary.id);
		return renderReadView(readDocument(doc, ctx.publicUrl), args, {
			tool: "read_child",
			fixedArgs: { document: summary.id },
		});
	},
};
