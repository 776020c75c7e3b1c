// The pages' HTML shell: Bun bundles web/index.html (an HTML import) on a server of its own on loopback, which
// nobody outside reaches. The page routes serve the bundled HTML, and the router's fallback its JS and CSS chunks,
// so every one of them gets the security headers (Bun's own routes on the public server would skip the router).
import type { Server } from "bun";
import type { AppContext } from "../context";
import { HttpError } from "../http/errors";
import shellBundle from "./index.html";

/** Where the bundle server has the shell; pages read it from there once (on every request under DEV). */
export const SHELL_PATH = "/_chopin/shell";

/** Bun's names for the bundle's other files, all at the root: `/chunk-<hash>.js`, `/chunk-<hash>.css`. */
const CHUNK_PATH = /^\/chunk-[A-Za-z0-9]+(?:\.[A-Za-z0-9]+)+$/;

/** What a chunk's answer keeps of Bun's headers (and of a request's, for a conditional GET). */
const CHUNK_HEADERS = ["content-type", "cache-control", "etag", "last-modified"];
const CONDITIONAL_HEADERS = ["if-none-match", "if-modified-since"];

/**
 * The loopback server Bun bundles the pages on: minified and cached unless DEV, without hot
 * reloading (its client would need an inline script). Anything but the bundle is 404.
 */
export function startPageBundle(dev: boolean): Server<undefined> {
	return Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		routes: { [SHELL_PATH]: shellBundle },
		development: dev ? { hmr: false } : false,
		fetch: () => new Response(null, { status: 404 }),
	});
}

class PageShell {
	#origin: string | undefined;
	#html: Promise<string> | undefined;
	constructor(readonly dev: boolean) {}

	/** Called once the server listens: the loopback origin to read the bundled shell from. */
	listen(origin: string): void {
		this.#origin = origin;
	}

	/** The bundled HTML. Bun bundles on the first request and caches it, so this process does too (except under DEV). */
	html(): Promise<string> {
		const origin = this.#origin;
		if (!origin) {
			return Promise.reject(
				new HttpError(503, "pages-unavailable", "The pages are served only by a listening server."),
			);
		}
		if (this.dev || !this.#html) {
			const loading = fetch(`${origin}${SHELL_PATH}`).then(async (res) => {
				if (!res.ok) throw new Error(`the page shell answered ${res.status}`);
				return res.text();
			});
			// A failure is not cached: the next page request tries again.
			loading.catch(() => {
				if (this.#html === loading) this.#html = undefined;
			});
			this.#html = loading;
		}
		return this.#html;
	}

	/**
	 * A chunk of the bundle (GET or HEAD), from the bundle server, with its status and caching headers;
	 * undefined for any other path, or one the bundle does not have, which the router answers 404.
	 */
	async asset(req: Request, url: URL): Promise<Response | undefined> {
		const origin = this.#origin;
		if (!origin || !CHUNK_PATH.test(url.pathname) || (req.method !== "GET" && req.method !== "HEAD")) {
			return undefined;
		}
		const res = await fetch(`${origin}${url.pathname}`, {
			method: req.method,
			headers: pick(req.headers, CONDITIONAL_HEADERS),
		});
		if (res.status === 404) {
			await res.body?.cancel();
			return undefined;
		}
		return new Response(res.body, { status: res.status, headers: pick(res.headers, CHUNK_HEADERS) });
	}
}

function pick(headers: Headers, names: readonly string[]): Headers {
	const out = new Headers();
	for (const name of names) {
		const value = headers.get(name);
		if (value !== null) out.set(name, value);
	}
	return out;
}

const shells = new WeakMap<AppContext, PageShell>();

/** The context's shell (one per running server). */
export function pageShell(ctx: AppContext): PageShell {
	const shell = shells.get(ctx) ?? new PageShell(ctx.config.dev);
	shells.set(ctx, shell);
	return shell;
}
