// What the documents service returns and the live hub sends: a document's summary, and its full view with blocks.
import { z } from "zod";
import { blockSchema } from "./blocks";

export const documentSummarySchema = z.strictObject({
	id: z.string(),
	/** owner/name of the GitHub repository the document belongs to. */
	repository: z.string(),
	title: z.string(),
	/** Counts changes of the source: 0 when created, +1 for each update or block edit. */
	revision: z.int().nonnegative(),
	archived: z.boolean(),
	deleted: z.boolean(),
	createdBy: z.string(),
	createdAt: z.int(),
	updatedAt: z.int(),
});
export type DocumentSummary = z.infer<typeof documentSummarySchema>;

/** A block without its text, which is `source.slice(start, end)`: the view carries the source once. */
export const blockViewSchema = blockSchema.omit({ text: true });
export type BlockView = z.infer<typeof blockViewSchema>;

export const documentViewSchema = documentSummarySchema.extend({
	source: z.string(),
	blocks: z.array(blockViewSchema),
});
export type DocumentView = z.infer<typeof documentViewSchema>;

/** Which part of a document a change touched, as document.updated says. */
export const DOCUMENT_CHANGES = ["created", "source", "title", "archived", "unarchived", "deleted"] as const;
export const documentChangeSchema = z.enum(DOCUMENT_CHANGES);
export type DocumentChange = z.infer<typeof documentChangeSchema>;
