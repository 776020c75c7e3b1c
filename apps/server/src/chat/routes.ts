// Chat over HTTP: a document's messages (the main Chat or one thread), paged, and a member's new message; an @chopin one goes to the
// document's Planner, which stores it only when it takes it (a refusal leaves nothing behind).
import { z } from "zod";
import type { AppContext } from "../context";
import { documentAccess } from "../documents/access";
import { HttpError } from "../http/errors";
import { jsonResponse } from "../http/responses";
import type { Router } from "../http/router";
import type { NewAttachment } from "./attachments";
import { ChatError } from "./errors";

/**
 * command runs one of the attached client's commands (capability-catalog); body is then its args, possibly
 * empty. attachments are the files sent with it (docs/chat.md, Files in Chat): a name and the bytes as base64.
 */
const postSchema = z.strictObject({
	body: z.string(),
	command: z.strictObject({ name: z.string(), kind: z.string() }).optional(),
	attachments: z.array(z.strictObject({ name: z.string(), data: z.string() })).optional(),
	/** Posts the message in the thread on this top-level message (docs/chat.md, Threads). */
	thread: z.string().optional(),
});

/** A query parameter as a whole number, or a 400 naming it. */
function intParam(url: URL, name: string): number | undefined {
	const raw = url.searchParams.get(name);
	if (raw === null) return undefined;
	if (!/^\d{1,15}$/.test(raw)) {
		throw new HttpError(
			400,
			"invalid-request",
			`The query parameter ${name} must be a whole number.`,
			undefined,
			{
				field: name,
			},
		);
	}
	return Number(raw);
}

/** Standard base64 (RFC 4648 §4), padded or not. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The files' bytes; data that is not base64 is refused naming the file. */
function decodeAttachments(files: { name: string; data: string }[]): NewAttachment[] {
	return files.map((file, i) => {
		if (!BASE64.test(file.data) || file.data.length % 4 === 1) {
			throw new ChatError(
				"attachment-data-invalid",
				`The data of file ${i + 1} (${JSON.stringify(file.name.slice(0, 60))}) is not base64.`,
			);
		}
		return { name: file.name, bytes: new Uint8Array(Buffer.from(file.data, "base64")) };
	});
}

export function registerChatRoutes(router: Router, ctx: AppContext): void {
	const chat = ctx.domain.chat;

	router.get("/api/documents/:id/messages", async ({ req, params, url }) => {
		const { document } = await documentAccess(ctx, req, params.id!, "read");
		const thread = url.searchParams.get("thread");
		const page = await chat.list(document.id, {
			before: intParam(url, "before"),
			limit: intParam(url, "limit"),
			...(thread !== null && { thread }),
		});
		return jsonResponse(page);
	});

	router.post("/api/documents/:id/messages", async (c) => {
		const { user, document } = await documentAccess(ctx, c.req, c.params.id!, "read");
		const { body, command, attachments, thread } = await c.json(postSchema);
		// handleMessage posts a message without a mention itself; one with @chopin only when the Planner takes it.
		const reply = await ctx.planner.handleMessage({
			documentId: document.id,
			author: user.login,
			body,
			...(command && { command }),
			...(attachments && { attachments: decodeAttachments(attachments) }),
			...(thread !== undefined && { thread }),
		});
		if (reply.status === "sent") {
			// The sender is told "sent" once the message is on disk (docs/server.md, durable commits).
			await reply.onDisk;
			return jsonResponse({ message: reply.message }, { status: 201 });
		}
		// Shown to the sender only: nothing was stored, and nothing is kept for a Planner that attaches later.
		throw new HttpError(409, reply.code, reply.message);
	});

	// A file a person sent with a message, to people who can read the document: an image as what its bytes are
	// (for the thumbnail), a text file as plain text to download; nosniff and a sandbox either way.
	router.get("/api/documents/:id/messages/:messageId/attachments/:index", async ({ req, params }) => {
		const { document } = await documentAccess(ctx, req, params.id!, "read");
		const index = /^\d{1,4}$/.test(params.index!) ? Number(params.index) : -1;
		const file = await chat.attachment(document.id, params.messageId!, index);
		const text = file.kind === "file";
		return new Response(new Uint8Array(file.bytes), {
			headers: {
				"content-type": text ? "text/plain; charset=utf-8" : file.mediaType,
				"content-disposition": `${text ? "attachment" : "inline"}; filename*=UTF-8''${encodeURIComponent(file.name)}`,
				"x-content-type-options": "nosniff",
				"content-security-policy": "default-src 'none'; sandbox",
				"cache-control": "private, max-age=3600",
			},
		});
	});

	// Retry on a failed reply: only the person who sent the message it answers (docs/chat.md, Retry).
	router.post("/api/documents/:id/messages/:messageId/retry", async (c) => {
		const { user, document } = await documentAccess(ctx, c.req, c.params.id!, "read");
		const retried = await ctx.planner.retry({
			documentId: document.id,
			replyId: c.params.messageId!,
			by: user.login,
		});
		if (retried.status === "sent") return jsonResponse({ message: retried.message }, { status: 202 });
		throw new HttpError(409, retried.code, retried.message);
	});
}
