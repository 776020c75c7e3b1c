// Run cards over HTTP: a document's cards as Chat shows them, for its members.
import type { AppContext } from "../context";
import { documentAccess } from "../documents/access";
import { jsonResponse } from "../http/responses";
import type { Router } from "../http/router";

export function registerRunRoutes(router: Router, ctx: AppContext): void {
	router.get("/api/documents/:id/runs", async ({ req, params }) => {
		const { document } = await documentAccess(ctx, req, params.id!, "read");
		return jsonResponse({ runs: await ctx.domain.runs.list(document.id) });
	});
}
