// A Chat message as the service returns it and the live hub sends it: body, status, Work details rows, images.
import { z } from "zod";
import { refusedImageSchema } from "./tool-results";

export const MESSAGE_ROLES = ["person", "planner", "system"] as const;
export const MESSAGE_STATUSES = ["streaming", "done", "failed"] as const;
export const TOOL_ROW_STATUSES = ["running", "done", "failed"] as const;

/** An image on a message: one of the document's own images, labelled generated in Chat. */
export const chatImageSchema = z.strictObject({
	/** `/images/<sha256>.<ext>`: served only to people who can read the document. */
	path: z.string(),
	mediaType: z.string(),
	width: z.int().positive(),
	height: z.int().positive(),
	/** Kept as the tool gave them, an empty string included; absent when it gave none. */
	alt: z.string().optional(),
	caption: z.string().optional(),
});
export type ChatImage = z.infer<typeof chatImageSchema>;

/** A file a person sent with the message (attachments): what Chat shows; the bytes are served at path. */
export const messageAttachmentSchema = z.strictObject({
	/** Its place among the message's files, from 0, in the order they were sent. */
	index: z.int().nonnegative(),
	name: z.string(),
	kind: z.enum(["image", "file"]),
	/** What the bytes showed: image/png, image/jpeg, image/webp, image/gif, or text/plain. */
	mediaType: z.string(),
	size: z.int().nonnegative(),
	/** `/api/documents/<id>/messages/<id>/attachments/<index>`: served only to people who can read the document. */
	path: z.string(),
});
export type MessageAttachment = z.infer<typeof messageAttachmentSchema>;

/** One tool call of a reply, as Work details shows it. Nothing here is unmasked. */
export const toolRowSchema = z.strictObject({
	toolCallId: z.string(),
	name: z.string(),
	/** The call's arguments as text, credentials masked. */
	input: z.string(),
	status: z.enum(TOOL_ROW_STATUSES),
	/** What the result shows, masked: text blocks and an image count, or the result's JSON. */
	result: z.string().optional(),
	/** A failed call: the structured error's kind (or code), or "Failed", and its masked message. */
	error: z.strictObject({ label: z.string(), message: z.string() }).optional(),
	/** How many image blocks the final result carried, shown or not. */
	imageCount: z.int().nonnegative(),
	startedAt: z.int(),
	endedAt: z.int().optional(),
});
export type ToolRow = z.infer<typeof toolRowSchema>;

export const messageViewSchema = z.strictObject({
	id: z.string(),
	documentId: z.string(),
	/** Position in the document's Chat: 1, 2, 3… in the order messages were created. */
	seq: z.int().positive(),
	role: z.enum(MESSAGE_ROLES),
	/** The person's login; null for the Planner and for system notices. */
	authorLogin: z.string().nullable(),
	body: z.string(),
	status: z.enum(MESSAGE_STATUSES),
	/** The failure line of a failed reply, masked. */
	error: z.string().optional(),
	/** The person's message a Planner reply answers. */
	replyTo: z.string().nullable(),
	/** Present on a message of a thread: the top-level message the thread hangs off (docs/chat.md, Threads). */
	threadRoot: z.string().optional(),
	/** Present on a top-level message with a thread: how many messages the thread holds. */
	threadReplies: z.int().positive().optional(),
	tools: z.array(toolRowSchema),
	images: z.array(chatImageSchema),
	/** A person's files, in the order sent; present only when the message has some. */
	attachments: z.array(messageAttachmentSchema).optional(),
	/** Present only when an image of the turn could not be shown. */
	refusedImages: z.array(refusedImageSchema).optional(),
	createdAt: z.int(),
	updatedAt: z.int(),
});
export type MessageView = z.infer<typeof messageViewSchema>;
