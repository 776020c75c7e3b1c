// Headers every response carries, and the Content-Security-Policy hook for pages.

/** For anything that is not a page: nothing may load, and nobody may frame it. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The policy of HTML pages: scripts, styles, images and connections (the /ws socket included) only
 * from this origin (and images from blob: URLs the page made: drawn diagrams), no inline script or
 * style, no plugins, no framing. A response that sets its own
 * Content-Security-Policy always keeps it.
 */
export const DEFAULT_PAGE_CSP =
	"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; " +
	"font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export interface SecurityHeaderOptions {
	/** The CSP for text/html responses; a function may vary it by request. */
	pageCsp?: string | ((req: Request) => string);
	/** Paths under this prefix are the JSON API: their responses are never cached. */
	apiPrefix?: string;
}

/** Adds the security headers a response lacks; headers a route set itself are kept. */
export function withSecurityHeaders(
	req: Request,
	res: Response,
	options: SecurityHeaderOptions = {},
): Response {
	const out = mutable(res);
	const set = (name: string, value: string) => {
		if (!out.headers.has(name)) out.headers.set(name, value);
	};
	set("x-content-type-options", "nosniff");
	// Document URLs name private work: never send them to another origin.
	set("referrer-policy", "same-origin");
	set("x-frame-options", "DENY");
	const isHtml = (out.headers.get("content-type") ?? "").toLowerCase().startsWith("text/html");
	const pageCsp = options.pageCsp ?? DEFAULT_PAGE_CSP;
	set("content-security-policy", isHtml ? (typeof pageCsp === "function" ? pageCsp(req) : pageCsp) : API_CSP);
	if (new URL(req.url).pathname.startsWith(options.apiPrefix ?? "/api/")) set("cache-control", "no-store");
	return out;
}

/** Responses from Response.redirect() or fetch() have immutable headers; copy those. */
function mutable(res: Response): Response {
	try {
		res.headers.set("x-content-type-options", res.headers.get("x-content-type-options") ?? "nosniff");
		return res;
	} catch {
		return new Response(res.body, res);
	}
}
