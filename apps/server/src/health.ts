// GET /healthz: a load balancer's question "can this process serve?", answered only after the store answers.
import type { AppContext } from "./context";
import { jsonResponse } from "./http/responses";
import type { Router } from "./http/router";

export function registerHealthRoutes(router: Router, ctx: AppContext): void {
	router.get("/healthz", async () => {
		const about = { version: ctx.version, store: ctx.store.kind };
		try {
			await ctx.store.ping();
		} catch (error) {
			ctx.log.warn("health check: the store does not answer", { error });
			return jsonResponse(
				{ ok: false, code: "store-unavailable", message: "The database does not answer.", ...about },
				{ status: 503 },
			);
		}
		return jsonResponse({ ok: true, ...about });
	});
}
