// The page routes: each path in PAGE_ROUTES serves the bundled shell, after the sign-in check when the page needs one.
import { requireUser } from "../auth/guards";
import type { AppContext } from "../context";
import type { Router } from "../http/router";
import { MERMAID_SCRIPT_PATH } from "./mermaid";
import { PAGE_ROUTES } from "./page-routes";
import { pageShell } from "./shell";

/** The mermaid package's browser bundle: 5 MB, so a page loads it only when it has a diagram to draw. */
const MERMAID_BUNDLE = Bun.resolveSync("mermaid/dist/mermaid.min.js", import.meta.dir);

export function registerPageRoutes(router: Router, ctx: AppContext): void {
	router.get(MERMAID_SCRIPT_PATH, () => {
		return new Response(Bun.file(MERMAID_BUNDLE), {
			headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" },
		});
	});

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
