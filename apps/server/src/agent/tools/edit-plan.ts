// edit_plan: block edits named by the index and digest of the latest read, applied all or nothing as the next
// revision; pages see it through the document.updated live event the documents service publishes.

import { DocumentError } from "../../documents/blocks";
import { type EditPlanInput, editPlanInputJsonSchema, parseEditPlanInput } from "../../documents/edit";
import { type HostToolDefinition, ToolInputError } from "./registry";

export const editPlan: HostToolDefinition<EditPlanInput> = {
	name: "edit_plan",
	description:
		'Edit this document by blocks, all or nothing: replace, delete or insert after a block named by {index, digest} from your latest read_plan or edit_plan result, or insert at "start" or "end". The result gives the new revision, the changed blocks (their new index and digest), the removed ones, and where untouched blocks moved (kept: old index from, new index to, count).',
	inputSchema: editPlanInputJsonSchema as Record<string, unknown>,
	writes: true,
	parse(input) {
		try {
			return parseEditPlanInput(input);
		} catch (error) {
			if (error instanceof DocumentError) throw new ToolInputError(error.message);
			throw error;
		}
	},
	async run(args, ctx) {
		const result = await ctx.domain.documents.applyBlockEdits(ctx.documentId, args);
		return {
			revision: result.document.revision,
			changed: result.changed,
			removed: result.removed,
			kept: result.kept,
		};
	},
};
