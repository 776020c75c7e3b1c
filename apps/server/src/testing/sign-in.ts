// Signing in on a test server as a browser would: a small cookie jar, the GitHub flow through the emulator, and local sign-in.
/** The cookies a browser would hold for one origin: enough for sign-in and the requests after it. */
export class CookieJar {
	readonly #cookies = new Map<string, string>();

	/** Takes the Set-Cookie headers of a response; Max-Age=0 removes a cookie. */
	take(res: Response): this {
		for (const line of res.headers.getSetCookie()) {
			const cookie = Bun.Cookie.parse(line);
			if (cookie.maxAge === 0 || cookie.value === "") this.#cookies.delete(cookie.name);
			else this.#cookies.set(cookie.name, cookie.value);
		}
		return this;
	}

	get(name: string): string | undefined {
		return this.#cookies.get(name);
	}

	/** The Cookie header to send. */
	header(): string {
		return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join("; ");
	}
}

type FetchHandler = (req: Request) => Promise<Response>;

export interface GitHubSignIn {
	jar: CookieJar;
	/** The server's answer to the callback: a 302 to `next` on success. */
	callback: Response;
	/** The URL GitHub sent the browser back to. */
	callbackUrl: string;
}

/**
 * /auth/github/start → the GitHub emulator's authorize page with `login=` (the test shortcut) →
 * the callback, through the server's fetch handler, carrying cookies like a browser.
 */
export async function signInWithGitHub(
	server: { fetch: FetchHandler; publicUrl: string },
	login: string,
	options: { next?: string; jar?: CookieJar; intent?: string } = {},
): Promise<GitHubSignIn> {
	const jar = options.jar ?? new CookieJar();
	const start = new URL("/auth/github/start", server.publicUrl);
	if (options.next) start.searchParams.set("next", options.next);
	if (options.intent) start.searchParams.set("intent", options.intent);
	const started = await server.fetch(new Request(start, { headers: { cookie: jar.header() } }));
	if (started.status !== 302) throw new Error(`/auth/github/start answered ${started.status}`);
	jar.take(started);
	const authorize = new URL(started.headers.get("location")!);
	authorize.searchParams.set("login", login);
	const approved = await fetch(authorize, { redirect: "manual" });
	if (approved.status !== 302) throw new Error(`the emulator's authorize answered ${approved.status}`);
	const callbackUrl = approved.headers.get("location")!;
	const callback = await server.fetch(
		new Request(callbackUrl, {
			headers: { cookie: jar.header(), accept: "text/html,application/xhtml+xml" },
		}),
	);
	jar.take(callback);
	return { jar, callback, callbackUrl };
}

/** POST /auth/local/sign-in as a page would (JSON, our Origin); returns the jar and the answer. */
export async function signInLocally(
	server: { fetch: FetchHandler; publicUrl: string },
	login: string,
	password?: string,
): Promise<{ jar: CookieJar; res: Response }> {
	const res = await server.fetch(
		new Request(new URL("/auth/local/sign-in", server.publicUrl), {
			method: "POST",
			headers: { "content-type": "application/json", origin: server.publicUrl },
			body: JSON.stringify({ login, ...(password === undefined ? {} : { password }) }),
		}),
	);
	return { jar: new CookieJar().take(res), res };
}
