// Chat over HTTP: a document's messages, paged, and a member's new message; an @chopin one goes to the
// document's Planner, which stores it only when it takes it (a refusal leaves nothing behind).
import { z } from "zod";
import type { AppContext } from "../context";
import { documentAccess } from "../documents/access";
import { HttpError } from "../http/errors";
import { jsonResponse } from "../http/responses";
import type { Router } from "../http/router";

/** command runs one of the attached client's commands (capability-catalog); body is then its args, possibly empty. */
const postSchema = z.strictObject({
	body: z.string(),
	command: z.strictObject({ name: z.string(), kind: z.string() }).optional(),
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

export function registerChatRoutes(router: Router, ctx: AppContext): void {
	const chat = ctx.domain.chat;

	router.get("/api/documents/:id/messages", async ({ req, params, url }) => {
		const { document } = await documentAccess(ctx, req, params.id!, "read");
		const page = await chat.list(document.id, {
			before: intParam(url, "before"),
			limit: intParam(url, "limit"),
		});
		return jsonResponse(page);
	});

	router.post("/api/documents/:id/messages", async (c) => {
		const { user, document } = await documentAccess(ctx, c.req, c.params.id!, "read");
		const { body, command } = await c.json(postSchema);
		// handleMessage posts a message without a mention itself; one with @chopin only when the Planner takes it.
		const reply = await ctx.planner.handleMessage({
			documentId: document.id,
			author: user.login,
			body,
			...(command && { command }),
		});
		if (reply.status === "sent") return jsonResponse({ message: reply.message }, { status: 201 });
		// Shown to the sender only: nothing was stored, and nothing is kept for a Planner that attaches later.
		throw new HttpError(409, reply.code, reply.message);
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
