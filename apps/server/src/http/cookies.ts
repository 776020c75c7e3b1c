// Cookies over Bun's own parser and serializer, with this server's defaults: HttpOnly, SameSite=Lax, Secure on https.
import type { CookieInit } from "bun";

export interface CookieOptions {
	/** Seconds; omit for a cookie that ends with the browser session. */
	maxAge?: number;
	path?: string;
	/** Defaults to true: scripts have no business reading our cookies. */
	httpOnly?: boolean;
}

/** The cookies a request carries, by name. Malformed pairs are skipped, never an error. */
export function readCookies(req: Request): Map<string, string> {
	const header = req.headers.get("cookie");
	if (!header) return new Map();
	return new Map(new Bun.CookieMap(header));
}

/**
 * A Set-Cookie value. Secure follows PUBLIC_URL: an https origin is served to browsers over TLS
 * (maybe by a proxy), while http://localhost must keep working without it.
 */
export function serializeCookie(
	publicUrl: string,
	name: string,
	value: string,
	options: CookieOptions = {},
): string {
	const init: CookieInit = {
		path: options.path ?? "/",
		httpOnly: options.httpOnly ?? true,
		sameSite: "lax",
		secure: publicUrl.startsWith("https:"),
	};
	if (options.maxAge !== undefined) init.maxAge = options.maxAge;
	return new Bun.Cookie(name, value, init).serialize();
}

/** A Set-Cookie value that removes the cookie. */
export function clearCookie(
	publicUrl: string,
	name: string,
	options: Pick<CookieOptions, "path"> = {},
): string {
	return serializeCookie(publicUrl, name, "", { ...options, maxAge: 0 });
}
