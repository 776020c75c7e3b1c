// A real server for API, socket and page tests: local accounts with every level of access to one
// repository, each signed in like a browser, and request helpers that carry a person's cookies.
import { ManualClock } from "@chopin/agent-link/clock";
import type { Store } from "../store/store";
import { type CookieJar, signInLocally } from "./sign-in";
import { type StoreServer, startStoreServer } from "./store-server";

/** alice administers acme/app and other/secret; bob writes, carol reads and dave has no access to acme/app. */
export const TEST_ACCOUNTS = {
	users: [
		{ login: "alice", name: "Alice" },
		{ login: "bob", name: "Bob" },
		{ login: "carol", name: "Carol", password: "carols-password" },
		{ login: "dave" },
	],
	repositories: {
		"acme/app": { alice: "admin", bob: "write", carol: "read" },
		"other/secret": { alice: "admin" },
	},
	organizations: {},
};

export type Person = "alice" | "bob" | "carol" | "dave";

export interface ApiServer {
	readonly server: StoreServer;
	readonly clock: ManualClock;
	/** Each person's signed-in cookies. */
	readonly jars: Record<Person, CookieJar>;
	/** A request as a page of `who` would make it (our Origin, JSON), or signed out with `who` null. */
	call(
		who: Person | null,
		method: string,
		path: string,
		body?: unknown,
		headers?: Record<string, string>,
	): Promise<Response>;
	stop(): Promise<void>;
}

export async function startApiServer(
	store: Store,
	options: { env?: Record<string, string>; clock?: ManualClock } = {},
): Promise<ApiServer> {
	const clock = options.clock ?? new ManualClock(Date.UTC(2026, 3, 1));
	const server = await startStoreServer({
		store,
		clock,
		env: { LOCAL_ACCOUNTS: JSON.stringify(TEST_ACCOUNTS), DEMO: "off", ...options.env },
	});
	try {
		const jars = {} as Record<Person, CookieJar>;
		for (const login of ["alice", "bob", "carol", "dave"] as const) {
			const { jar, res } = await signInLocally(
				server,
				login,
				login === "carol" ? "carols-password" : undefined,
			);
			if (res.status !== 200) throw new Error(`signing in ${login} answered ${res.status}`);
			jars[login] = jar;
		}
		return {
			server,
			clock,
			jars,
			call(who, method, path, body, headers = {}) {
				const init: RequestInit = {
					method,
					headers: {
						origin: server.publicUrl,
						...(who ? { cookie: jars[who].header() } : {}),
						...(body !== undefined && !(body instanceof Uint8Array)
							? { "content-type": "application/json" }
							: {}),
						...headers,
					},
				};
				if (body instanceof Uint8Array) init.body = new Uint8Array(body);
				else if (body !== undefined) init.body = JSON.stringify(body);
				return server.fetch(new Request(new URL(path, server.publicUrl), init));
			},
			stop: () => server.stop(),
		};
	} catch (error) {
		await server.stop();
		throw error;
	}
}

/** The JSON of a response, for assertions. */
export async function json(
	res: Response,
): Promise<Record<string, unknown> & { code?: string; message?: string }> {
	return (await res.json()) as Record<string, unknown>;
}

/** Creates a document in acme/app as alice and returns its id. */
export async function createDocument(
	api: ApiServer,
	source = "# Plan\n\nFirst paragraph.\n",
	title = "Plan",
): Promise<string> {
	const res = await api.call("alice", "POST", "/api/documents", { repository: "acme/app", title, source });
	if (res.status !== 201) throw new Error(`creating a document answered ${res.status}: ${await res.text()}`);
	return ((await res.json()) as { document: { id: string } }).document.id;
}
