import { afterEach, beforeEach, expect, test } from "bun:test";
import WebSocket from "ws";
import { describeStores } from "../store/testing";
import { type ApiServer, createDocument, type Person, startApiServer } from "../testing/api-server";
import { LIVE_PING_MS } from "./socket";

/** A page's socket: the frames it got, in order, and promises for the next frame, ping and close. */
class Client {
	readonly frames: { type: string; [key: string]: unknown }[] = [];
	readonly pings: number[] = [];
	readonly closed: Promise<{ code: number; reason: string }>;
	readonly #waiters: (() => void)[] = [];

	constructor(readonly ws: WebSocket) {
		ws.on("message", (data) => {
			this.frames.push(JSON.parse(String(data)));
			this.#wake();
		});
		ws.on("ping", () => {
			this.pings.push(Date.now());
			this.#wake();
		});
		this.closed = new Promise((resolve) =>
			ws.on("close", (code, reason) => resolve({ code, reason: String(reason) })),
		);
	}

	#wake(): void {
		for (const wake of this.#waiters.splice(0)) wake();
	}

	/** Resolves once `check` holds, re-checked on every frame and ping. */
	async until<T>(check: () => T | undefined | false): Promise<T> {
		for (;;) {
			const value = check();
			if (value) return value;
			await new Promise<void>((resolve) => this.#waiters.push(resolve));
		}
	}

	frame(type: string) {
		return this.until(() => this.frames.find((f) => f.type === type));
	}

	close(): void {
		this.ws.close();
	}
}

describeStores("/ws live socket", (t) => {
	let api: ApiServer;
	const clients: Client[] = [];
	beforeEach(async () => {
		api = await startApiServer(t.store);
	});
	afterEach(async () => {
		for (const c of clients.splice(0)) c.ws.terminate();
		await api.stop();
	});

	const url = (id: string | null) =>
		`${api.server.url.replace("http:", "ws:")}/ws${id === null ? "" : `?document=${id}`}`;

	/** Opens a socket as a page of `who` would; resolves once it is open. */
	const connect = async (who: Person, id: string, options: WebSocket.ClientOptions = {}) => {
		const ws = new WebSocket(url(id), {
			headers: { origin: api.server.publicUrl, cookie: api.jars[who].header() },
			...options,
		});
		const client = new Client(ws);
		clients.push(client);
		await new Promise<void>((resolve, reject) => {
			ws.once("open", () => resolve());
			ws.once("error", reject);
		});
		return client;
	};

	/** The HTTP status of a refused upgrade and its JSON code. */
	const refused = (target: string, headers: Record<string, string>) =>
		new Promise<{ status: number; code: string }>((resolve, reject) => {
			const ws = new WebSocket(target, { headers });
			ws.on("unexpected-response", (_req, res) => {
				let body = "";
				res.on("data", (chunk: Buffer) => {
					body += chunk;
				});
				res.on("end", () => resolve({ status: res.statusCode ?? 0, code: JSON.parse(body).code }));
			});
			ws.on("open", () => reject(new Error("the upgrade was accepted")));
			ws.on("error", () => {});
		});

	test("a member's page gets ready, then every change of the document as it happens", async () => {
		const id = await createDocument(api);
		const client = await connect("carol", id);
		expect(await client.frame("ready")).toEqual({ type: "ready", documentId: id });

		await api.call("bob", "POST", `/api/documents/${id}/messages`, { body: "hello" });
		const created = await client.frame("message.created");
		expect((created.message as { body: string }).body).toBe("hello");

		await api.call("alice", "POST", `/api/documents/${id}/decisions`, {
			input: { method: "confirm", title: "Ship?", message: "" },
		});
		expect(((await client.frame("decision.created")).decision as { status: string }).status).toBe("open");

		await api.call("alice", "PUT", `/api/documents/${id}/source`, { source: "# New\n", revision: 0 });
		const updated = await client.frame("document.updated");
		expect(updated).toMatchObject({ change: "source", source: "# New\n", by: "alice" });

		// Another document's changes never reach this socket.
		const other = await createDocument(api, "# Other\n", "Other");
		await api.call("bob", "POST", `/api/documents/${other}/messages`, { body: "elsewhere" });
		await api.call("bob", "POST", `/api/documents/${id}/messages`, { body: "here again" });
		await client.until(() => client.frames.filter((f) => f.type === "message.created").length === 2);
		const bodies = client.frames
			.filter((f) => f.type === "message.created")
			.map((f) => (f.message as { body: string }).body);
		expect(bodies).toEqual(["hello", "here again"]);
	});

	test("the upgrade is refused over HTTP: foreign or missing Origin, no sign-in, no read access, no document", async () => {
		const id = await createDocument(api);
		const own = api.server.publicUrl;
		const cookie = (who: Person) => api.jars[who].header();
		expect(await refused(url(id), { origin: "https://evil.example", cookie: cookie("alice") })).toEqual({
			status: 403,
			code: "origin-forbidden",
		});
		expect(await refused(url(id), { cookie: cookie("alice") })).toEqual({
			status: 403,
			code: "origin-forbidden",
		});
		expect(await refused(url(id), { origin: own })).toEqual({ status: 401, code: "sign-in-required" });
		expect(await refused(url(id), { origin: own, cookie: cookie("dave") })).toEqual({
			status: 404,
			code: "document-not-found",
		});
		expect(await refused(url("aaaaaaaaaaaa"), { origin: own, cookie: cookie("alice") })).toEqual({
			status: 404,
			code: "document-not-found",
		});
		expect(await refused(url(null), { origin: own, cookie: cookie("alice") })).toEqual({
			status: 400,
			code: "invalid-request",
		});
		const plain = await api.call("alice", "GET", `/ws?document=${id}`);
		expect(plain.status).toBe(426);
	});

	test("signing out closes that browser's sockets with 4401, and only those", async () => {
		const id = await createDocument(api);
		const carol = await connect("carol", id);
		const bob = await connect("bob", id);
		await carol.frame("ready");
		await bob.frame("ready");
		await api.call("carol", "POST", "/auth/sign-out");
		expect(await carol.closed).toEqual({ code: 4401, reason: "signed out" });
		await api.call("bob", "POST", `/api/documents/${id}/messages`, { body: "still here" });
		await bob.frame("message.created");
	});

	test("deleting the document sends the change, then closes with 4404", async () => {
		const id = await createDocument(api);
		const client = await connect("carol", id);
		await client.frame("ready");
		await api.call("alice", "DELETE", `/api/documents/${id}`);
		expect(await client.frame("document.updated")).toMatchObject({ change: "deleted" });
		expect((await client.closed).code).toBe(4404);
	});

	test("the server pings on its clock, and closes a page that never answers", async () => {
		const id = await createDocument(api);
		const client = await connect("carol", id);
		await client.frame("ready");
		await api.clock.advance(LIVE_PING_MS);
		await client.until(() => client.pings.length === 1);
		await api.clock.advance(LIVE_PING_MS);
		await client.until(() => client.pings.length === 2);

		const silent = await connect("bob", id, { autoPong: false });
		await silent.frame("ready");
		for (let i = 0; i < 3; i++) await api.clock.advance(LIVE_PING_MS);
		expect(await silent.closed).toEqual({ code: 1001, reason: "unresponsive" });
	});
});
