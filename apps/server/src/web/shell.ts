// The pages' HTML shell: Bun bundles web/index.html (an HTML import served from Bun.serve's routes at
// SHELL_PATH), and the page routes serve that bundled HTML through the router, so every page gets the
// sign-in redirect, the strict page CSP and the other security headers. The JS and CSS chunks are Bun's.
import type { AppContext } from "../context";
import { HttpError } from "../http/errors";
import shellBundle from "./index.html";

/** Where Bun serves the bundled shell; pages fetch it from here once (on every request under DEV). */
export const SHELL_PATH = "/_chopin/shell";

/** The Bun.serve routes of the pages: the shell bundle (its chunks are served by Bun beside it). */
export function pageBundleRoutes() {
	return { [SHELL_PATH]: shellBundle };
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
}

const shells = new WeakMap<AppContext, PageShell>();

/** The context's shell (one per running server). */
export function pageShell(ctx: AppContext): PageShell {
	const shell = shells.get(ctx) ?? new PageShell(ctx.config.dev);
	shells.set(ctx, shell);
	return shell;
}

/** The address this process can reach itself on: a wildcard listen address becomes loopback. */
export function loopbackOrigin(host: string, port: number): string {
	if (host === "0.0.0.0") return `http://127.0.0.1:${port}`;
	if (host === "::" || host === "[::]") return `http://[::1]:${port}`;
	return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}
