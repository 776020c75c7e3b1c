// GET /api/documents/:id/planner: whether the document has a Planner, for its page (live changes come as planner.status).
import type { AppContext } from "../context";
import { documentAccess } from "../documents/access";
import { jsonResponse } from "../http/responses";
import type { Router } from "../http/router";

export function registerPlannerStatusRoute(router: Router, ctx: AppContext): void {
	router.get("/api/documents/:id/planner", async ({ req, params }) => {
		const { document } = await documentAccess(ctx, req, params.id!, "read");
		return jsonResponse({ planner: ctx.planner.status(document.id) });
	});
}
