// Test helpers for paired machines: the CLI's HTTP calls (pairing, the machine API) and a control-channel client
// over the `ws` package, whose unexpected-response event exposes a refused upgrade's status and JSON body.
import {
	type ClientInfo,
	formatClientHeader,
	MACHINE_PATH,
	MACHINE_SUBPROTOCOL,
	type MachineClientMessage,
	type MachineServerMessage,
	parseMachineServerFrame,
} from "@chopin/agent-link/machine";
import WebSocket from "ws";
import { type CookieJar, signInLocally, signInWithGitHub } from "./sign-in";

export const TEST_CLIENT: ClientInfo = { version: "0.2.0", os: "linux", arch: "x64", install: "npm" };

/** AUTH_MODE=local with three people: ana (admin), ben (read) and cy (write) on octo/score; ana and cy write octo/other. */
export const LOCAL_ENV: Record<string, string> = {
	AUTH_MODE: "local",
	DEMO: "off",
	LOCAL_ACCOUNTS: JSON.stringify({
		users: [{ login: "ana" }, { login: "ben" }, { login: "cy" }],
		repositories: {
			"octo/score": { ana: "admin", ben: "read", cy: "write" },
			"octo/other": { ana: "write", cy: "write" },
		},
	}),
};

/** What the tests call: a server's fetch (a real port or its router) and the origin its pages use. */
export interface Target {
	fetch(req: Request): Promise<Response>;
	publicUrl: string;
}

/** A request as the CLI sends it: the client header, JSON, and the machine credential when given. */
export function cliRequest(
	target: Target,
	method: string,
	path: string,
	options: { body?: unknown; credential?: string; client?: ClientInfo | null } = {},
): Promise<Response> {
	const headers: Record<string, string> = {};
	if (options.client !== null) headers["chopin-client"] = formatClientHeader(options.client ?? TEST_CLIENT);
	if (options.credential) headers.authorization = `Bearer ${options.credential}`;
	if (options.body !== undefined) headers["content-type"] = "application/json";
	return target.fetch(
		new Request(new URL(path, target.publicUrl), {
			method,
			headers,
			body: options.body === undefined ? undefined : JSON.stringify(options.body),
		}),
	);
}

/** A request as a page sends it: the session cookie, our Origin, JSON. */
export function pageRequest(
	target: Target,
	jar: CookieJar,
	method: string,
	path: string,
	body?: unknown,
): Promise<Response> {
	return target.fetch(
		new Request(new URL(path, target.publicUrl), {
			method,
			headers: {
				cookie: jar.header(),
				origin: target.publicUrl,
				...(body !== undefined && { "content-type": "application/json" }),
			},
			body: body === undefined ? undefined : JSON.stringify(body),
		}),
	);
}

export const pairingStartBody = (repositories: string[] = ["octo/score"], label = "ana's laptop") => ({
	label,
	checkouts: repositories.map((repository, i) => ({ path: `/home/ana/src/${i}`, repository })),
	client: TEST_CLIENT,
});

/** start → confirm (with the person's session) → claim, in local mode. Returns the credential and ids. */
export async function pairLocally(
	target: Target,
	jar: CookieJar,
	options: { repositories?: string[]; autoRun?: boolean; label?: string } = {},
): Promise<{ credential: string; machineId: string; pairingId: string }> {
	const started = await cliRequest(target, "POST", "/api/connector/pairings", {
		body: pairingStartBody(options.repositories, options.label),
	});
	if (started.status !== 201) throw new Error(`start answered ${started.status}: ${await started.text()}`);
	const { id, secret, code } = (await started.json()) as { id: string; secret: string; code: string };
	const confirmed = await pageRequest(target, jar, "POST", `/api/connector/pairings/${id}/confirm`, {
		code,
		autoRun: options.autoRun ?? false,
	});
	if (confirmed.status !== 200)
		throw new Error(`confirm answered ${confirmed.status}: ${await confirmed.text()}`);
	const claimed = await cliRequest(target, "POST", `/api/connector/pairings/${id}/claim`, {
		body: { secret },
	});
	const body = (await claimed.json()) as { credential: string; machine: { id: string } };
	if (claimed.status !== 200 || !body.credential) throw new Error(`claim answered ${claimed.status}`);
	return { credential: body.credential, machineId: body.machine.id, pairingId: id };
}

/** A test server as pages and the CLI reach it: named by its PUBLIC_URL (localhost), each request sent to its port. */
export function serverTarget(server: { url: string; context: { config: { publicUrl: string } } }): Target {
	return {
		fetch: (req) => fetch(new Request(new URL(new URL(req.url).pathname, server.url), req)),
		publicUrl: server.context.config.publicUrl,
	};
}

/** A Planner credential (chopin_p_) for the document, asked for as the CLI does; throws unless one is issued. */
export async function issuePlannerToken(
	target: Target,
	credential: string,
	document: string,
): Promise<string> {
	const res = await cliRequest(target, "POST", "/api/connector/planner", { credential, body: { document } });
	if (res.status !== 200) throw new Error(`a Planner credential answered ${res.status}: ${await res.text()}`);
	return ((await res.json()) as { token: string }).token;
}

/** Where most machine tests start (AUTH_MODE=local): `login` signed in and a machine of theirs paired. */
export async function pairedLocally(
	server: Parameters<typeof serverTarget>[0],
	login = "ana",
): Promise<{ target: Target; jar: CookieJar; credential: string; machineId: string; pairingId: string }> {
	const target = serverTarget(server);
	const { jar } = await signInLocally(target, login);
	return { target, jar, ...(await pairLocally(target, jar)) };
}

/**
 * GitHub mode: start → confirm (the person's session) → the machine's own GitHub grant through
 * the emulator (/auth/github/start?intent=machine-pairing) → claim.
 */
export async function pairWithGitHub(
	target: Target,
	jar: CookieJar,
	login: string,
	options: { repositories?: string[]; autoRun?: boolean; grantAs?: string } = {},
): Promise<{ credential: string; machineId: string; pairingId: string; grant: Response }> {
	const started = await cliRequest(target, "POST", "/api/connector/pairings", {
		body: pairingStartBody(options.repositories ?? ["score-team/score"], `${login}'s laptop`),
	});
	if (started.status !== 201) throw new Error(`start answered ${started.status}: ${await started.text()}`);
	const { id, secret, code } = (await started.json()) as { id: string; secret: string; code: string };
	const confirmed = await pageRequest(target, jar, "POST", `/api/connector/pairings/${id}/confirm`, {
		code,
		autoRun: options.autoRun ?? false,
	});
	const answer = (await confirmed.json()) as { status: string; location: string };
	if (confirmed.status !== 200 || answer.status !== "authorize") {
		throw new Error(`confirm answered ${confirmed.status}: ${JSON.stringify(answer)}`);
	}
	const location = new URL(answer.location, target.publicUrl);
	const { callback } = await signInWithGitHub(target, options.grantAs ?? login, {
		jar,
		intent: location.searchParams.get("intent")!,
		next: location.searchParams.get("next")!,
	});
	if (callback.status !== 302) return { credential: "", machineId: "", pairingId: id, grant: callback };
	const claimed = await cliRequest(target, "POST", `/api/connector/pairings/${id}/claim`, {
		body: { secret },
	});
	const body = (await claimed.json()) as { credential: string; machine: { id: string } };
	if (claimed.status !== 200 || !body.credential) throw new Error(`claim answered ${claimed.status}`);
	return { credential: body.credential, machineId: body.machine.id, pairingId: id, grant: callback };
}

export const hello = (
	repositories: string[] = ["octo/score"],
	extra: Partial<Extract<MachineClientMessage, { type: "hello" }>> = {},
): MachineClientMessage => ({
	type: "hello",
	version: 1,
	checkouts: repositories.map((repository, i) => ({ path: `/home/ana/src/${i}`, repository })),
	runs: [],
	planners: [],
	sandbox: { kind: "bwrap" },
	...extra,
});

export interface MachineClient {
	readonly ws: WebSocket;
	/** The next server message (in order). */
	next(): Promise<MachineServerMessage>;
	/** Messages received and not yet taken by next(). */
	readonly queued: MachineServerMessage[];
	send(message: MachineClientMessage | string): void;
	/** Resolves with the close code and reason. */
	readonly closed: Promise<{ code: number; reason: string }>;
	/** Resolves on each ping the server sends (counted). */
	readonly pings: { count: number; next(): Promise<void> };
	/**
	 * Pings the server and waits for its pong. Frames arrive in order, so once it is back the
	 * server has read everything this client sent before it (its own pongs included).
	 */
	roundTrip(): Promise<void>;
	close(): void;
}

export interface RefusedUpgrade {
	status: number;
	body: Record<string, unknown>;
}

/**
 * Opens the control channel. Resolves with a client once the socket is open, or with the
 * refusal (status and JSON body) when the server refuses the upgrade.
 */
export function openMachineSocket(
	serverUrl: string,
	options: {
		credential?: string;
		client?: ClientInfo | null;
		protocols?: string[];
		autoPong?: boolean;
		origin?: string;
	} = {},
): Promise<MachineClient | RefusedUpgrade> {
	const headers: Record<string, string> = {};
	if (options.credential) headers.authorization = `Bearer ${options.credential}`;
	if (options.client !== null) headers["chopin-client"] = formatClientHeader(options.client ?? TEST_CLIENT);
	if (options.origin) headers.origin = options.origin;
	const url = `${serverUrl.replace(/^http/, "ws")}${MACHINE_PATH}`;
	const ws = new WebSocket(url, options.protocols ?? [MACHINE_SUBPROTOCOL], {
		headers,
		autoPong: options.autoPong ?? true,
	});
	const queue: MachineServerMessage[] = [];
	const waiting: ((m: MachineServerMessage) => void)[] = [];
	const pingWaiters: (() => void)[] = [];
	const pings = {
		count: 0,
		next: () => new Promise<void>((resolve) => pingWaiters.push(resolve)),
	};
	ws.on("ping", () => {
		pings.count += 1;
		for (const w of pingWaiters.splice(0)) w();
	});
	ws.on("message", (data) => {
		const parsed = parseMachineServerFrame(String(data));
		if (!parsed.ok) throw new Error(`the server sent a bad frame: ${parsed.error.message}`);
		const waiter = waiting.shift();
		if (waiter) waiter(parsed.message);
		else queue.push(parsed.message);
	});
	const closed = new Promise<{ code: number; reason: string }>((resolve) => {
		ws.on("close", (code, reason) => resolve({ code, reason: String(reason) }));
	});
	return new Promise((resolve, reject) => {
		ws.on("unexpected-response", (_req, res) => {
			let text = "";
			res.on("data", (chunk) => {
				text += String(chunk);
			});
			res.on("end", () => {
				resolve({
					status: res.statusCode ?? 0,
					body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
				});
				ws.terminate();
			});
		});
		ws.on("error", (error) => reject(error));
		ws.on("open", () =>
			resolve({
				ws,
				queued: queue,
				next: () =>
					queue.length
						? Promise.resolve(queue.shift()!)
						: new Promise<MachineServerMessage>((r) => waiting.push(r)),
				send: (message) => ws.send(typeof message === "string" ? message : JSON.stringify(message)),
				closed,
				pings,
				roundTrip: () =>
					new Promise<void>((r) => {
						ws.once("pong", () => r());
						ws.ping();
					}),
				close: () => ws.close(),
			}),
		);
	});
}

/** Opens the control channel and expects it to open. */
export async function connectMachine(
	serverUrl: string,
	credential: string,
	options: Parameters<typeof openMachineSocket>[1] = {},
): Promise<MachineClient> {
	const result = await openMachineSocket(serverUrl, { ...options, credential });
	if ("status" in result)
		throw new Error(`the upgrade was refused: ${result.status} ${JSON.stringify(result.body)}`);
	return result;
}

/** Opens the control channel, says hello and returns the welcome (or throws on anything else first). */
export async function helloMachine(
	serverUrl: string,
	credential: string,
	repositories: string[] = ["octo/score"],
	options: Parameters<typeof openMachineSocket>[1] = {},
): Promise<{ client: MachineClient; welcome: Extract<MachineServerMessage, { type: "welcome" }> }> {
	const client = await connectMachine(serverUrl, credential, options);
	client.send(hello(repositories));
	const welcome = await client.next();
	if (welcome.type !== "welcome") throw new Error(`expected welcome, got ${JSON.stringify(welcome)}`);
	return { client, welcome };
}
