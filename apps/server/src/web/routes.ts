// The page routes: each path in PAGE_ROUTES serves the bundled shell, after the sign-in check when the page needs one.
import { requireUser } from "../auth/guards";
import type { AppContext } from "../context";
import type { Router } from "../http/router";
import { PAGE_ROUTES } from "./page-routes";
import { pageShell } from "./shell";

export function registerPageRoutes(router: Router, ctx: AppContext): void {
	for (const route of PAGE_ROUTES) {
		router.get(route.pattern, async ({ req }) => {
			// A signed-out person is redirected to the sign-in, back here afterwards.
			if (route.signIn) await requireUser(ctx, req);
			return new Response(await pageShell(ctx).html(), {
				headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
			});
		});
	}
}
