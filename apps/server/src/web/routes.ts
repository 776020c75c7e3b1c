// The page routes: each path in PAGE_ROUTES serves the bundled shell, after the sign-in check when the page needs one.
import { requireUser } from "../auth/guards";
import type { AppContext } from "../context";
import type { Router } from "../http/router";
import { MERMAID_FRAME_PATH, MERMAID_FRAME_SCRIPT_PATH, MERMAID_SCRIPT_PATH } from "./mermaid";
import { PAGE_ROUTES } from "./page-routes";
import { pageShell } from "./shell";

/** The mermaid package's browser bundle: 5 MB, so only the renderer frame loads it, made when a page has a diagram. */
const MERMAID_BUNDLE = Bun.resolveSync("mermaid/dist/mermaid.min.js", import.meta.dir);
const MERMAID_FRAME_SCRIPT = new URL("./mermaid-frame.js", import.meta.url).pathname;

/**
 * The renderer frame's page. Its own policy: scripts from this origin only, and inline styles, which
 * mermaid measures text with; it is framed only by our pages, in a sandbox without an origin.
 */
const MERMAID_FRAME_HTML = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Diagram renderer</title>
<script src="${MERMAID_SCRIPT_PATH}"></script><script src="${MERMAID_FRAME_SCRIPT_PATH}"></script></head><body></body></html>`;
const MERMAID_FRAME_CSP =
	"default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src data:; font-src 'none'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'self'";

const script = (file: string) =>
	new Response(Bun.file(file), {
		headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" },
	});

export function registerPageRoutes(router: Router, ctx: AppContext): void {
	// Browsers ask for it on every page; there is none, and a 404 would be an error in their consoles.
	router.get(
		"/favicon.ico",
		() => new Response(null, { status: 204, headers: { "cache-control": "public, max-age=86400" } }),
	);
	router.get(MERMAID_SCRIPT_PATH, () => script(MERMAID_BUNDLE));
	router.get(MERMAID_FRAME_SCRIPT_PATH, () => script(MERMAID_FRAME_SCRIPT));
	router.get(MERMAID_FRAME_PATH, () => {
		return new Response(MERMAID_FRAME_HTML, {
			headers: {
				"content-type": "text/html; charset=utf-8",
				"cache-control": "no-cache",
				"content-security-policy": MERMAID_FRAME_CSP,
				"x-frame-options": "SAMEORIGIN",
			},
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
