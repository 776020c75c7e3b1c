// GET and PUT /api/documents/:id/model: what the composer offers from the attached client's catalog and the
// document's choice of model and thinking level (capability-catalog; live changes come as chat.model).
import { z } from "zod";
import type { AppContext } from "../context";
import { documentAccess } from "../documents/access";
import { HttpError } from "../http/errors";
import { jsonResponse } from "../http/responses";
import type { Router } from "../http/router";

/** null is the client's default model, or the model's own level. Strings are taken exactly as the client spelled them. */
const chooseSchema = z.strictObject({
	model: z.string().min(1).nullable(),
	thinkingLevel: z.string().min(1).nullable(),
});

export function registerModelRoutes(router: Router, ctx: AppContext): void {
	router.get("/api/documents/:id/model", async ({ req, params }) => {
		const { document } = await documentAccess(ctx, req, params.id!, "read");
		return jsonResponse(await ctx.planner.modelState(document.id));
	});

	// Whoever may ask the Planner in Chat may choose what it runs: the same access as posting a message.
	router.put("/api/documents/:id/model", async (c) => {
		const { user, document } = await documentAccess(ctx, c.req, c.params.id!, "read");
		if (document.archived) {
			throw new HttpError(
				409,
				"document-archived",
				`Document ${document.id} is archived: its Planner runs nothing.`,
			);
		}
		const choice = await c.json(chooseSchema);
		const chosen = await ctx.planner.chooseModel(document.id, user.login, choice);
		if (!chosen.ok) throw new HttpError(409, chosen.code, chosen.message);
		return jsonResponse(chosen.state);
	});
}
