// Test helpers for builds and investigations: a real server in local mode with ana's paired machine on its control
// channel (hello with a runner), a document, the page's requests, and waiting for a given control-channel message.
import type { ManualClock } from "@chopin/agent-link/clock";
import type { MachineClientMessage, MachineServerMessage, RunState } from "@chopin/agent-link/machine";
import type { BuildView } from "../builds/build-view";
import type { LiveEvent } from "../live/events";
import type { StoreKind } from "../store/store";
import {
	connectMachine,
	hello,
	LOCAL_ENV,
	type MachineClient,
	pageRequest,
	pairLocally,
	type Target,
} from "./machines";
import { startTestServer, type TestServer } from "./server";
import { type CookieJar, signInLocally } from "./sign-in";

export const BASE = "a".repeat(40);

type Hello = Extract<MachineClientMessage, { type: "hello" }>;

export interface BuildsSetup {
	server: TestServer;
	clock: ManualClock;
	target: Target;
	/** ana: admin of octo/score, owner of the machine. */
	jar: CookieJar;
	credential: string;
	machineId: string;
	documentId: string;
	/** The machine's control channel, said hello with a runner. */
	machine: MachineClient;
	/** Every control channel this setup opened, closed by close(). */
	sockets: MachineClient[];
	/** A page's request (ana's unless another jar is given). */
	get(path: string, jar?: CookieJar): Promise<Response>;
	post(path: string, body?: unknown, jar?: CookieJar): Promise<Response>;
	close(): Promise<void>;
}

/** The hello of ana's machine: a checkout of octo/score at BASE, a runner, and the runs given. */
export function machineHello(runs: RunState[] = [], extra: Partial<Hello> = {}): MachineClientMessage {
	return hello(["octo/score"], {
		checkouts: [{ path: "/home/ana/src/score", repository: "octo/score", branch: "main", head: BASE }],
		runs,
		runner: { available: true },
		...extra,
	});
}

export async function setupBuilds(
	clock: ManualClock,
	options: { store?: StoreKind; env?: Record<string, string>; runner?: Hello["runner"] | null } = {},
): Promise<BuildsSetup> {
	const server = await startTestServer({
		clock,
		store: options.store,
		env: {
			...LOCAL_ENV,
			// Long liveness limits: a ManualClock moved minutes ahead must not drop the socket as unresponsive.
			AGENT_CONNECTION_PING_MS: "1800000",
			AGENT_CONNECTION_TIMEOUT_MS: "3600000",
			AGENT_CONNECTION_MAX_SILENCE_MS: "3600000",
			...options.env,
		},
	});
	const sockets: MachineClient[] = [];
	const close = async () => {
		for (const s of sockets.splice(0)) s.close();
		await server.close();
	};
	try {
		const target: Target = { fetch: (req) => server.fetch(req), publicUrl: server.context.config.publicUrl };
		const { jar } = await signInLocally(target, "ana");
		const { credential, machineId } = await pairLocally(target, jar);
		const document = await server.context.domain.documents.create({
			repository: "octo/score",
			title: "Rollout",
			source: "# Rollout\n\nShip it in two steps.\n",
			createdBy: "ana",
		});
		const setup: BuildsSetup = {
			server,
			clock,
			target,
			jar,
			credential,
			machineId,
			documentId: document.id,
			machine: undefined as unknown as MachineClient,
			sockets,
			get: (path, other = jar) => pageRequest(target, other, "GET", path),
			post: (path, body, other = jar) => pageRequest(target, other, "POST", path, body),
			close,
		};
		// null: a CLI from before builds, which reports no runner (undefined leaves it out of the JSON).
		const runner = options.runner === undefined ? { available: true } : (options.runner ?? undefined);
		setup.machine = await reconnect(setup, [], { runner });
		return setup;
	} catch (error) {
		await close();
		throw error;
	}
}

/** Opens the machine's control channel again and says hello with the runs it holds; waits for the welcome. */
export async function reconnect(
	s: Pick<BuildsSetup, "server" | "credential" | "sockets">,
	runs: RunState[] = [],
	extra: Partial<Hello> = {},
): Promise<MachineClient> {
	const client = await connectMachine(s.server.url, s.credential);
	s.sockets.push(client);
	// machineHello's defaults, then extra (runner: undefined sends none).
	client.send(machineHello(runs, extra));
	await expectMessage(client, "welcome");
	return client;
}

/** The next message of this type; others before it are skipped (planners, say). */
export async function expectMessage<T extends MachineServerMessage["type"]>(
	client: MachineClient,
	type: T,
): Promise<Extract<MachineServerMessage, { type: T }>> {
	for (;;) {
		const message = await client.next();
		if (message.type === type) return message as Extract<MachineServerMessage, { type: T }>;
	}
}

/** Waits until the server has read everything the client sent, and the builds it touched have settled. */
export async function sync(s: Pick<BuildsSetup, "server">, client: MachineClient): Promise<void> {
	await client.roundTrip();
	await s.server.context.machines.settled();
	await s.server.context.builds.settled();
}

/** Drops the machine's socket and waits until the server has it offline. */
export async function drop(s: BuildsSetup, client: MachineClient): Promise<void> {
	client.close();
	await client.closed;
	const { machines } = s.server.context;
	await until(() => !machines.isOnline(s.machineId), "the machine to be offline");
	await machines.settled();
	await s.server.context.builds.settled();
}

export async function until(predicate: () => boolean | Promise<boolean>, what: string): Promise<void> {
	for (let i = 0; i < 4000; i++) {
		if (await predicate()) return;
		await Bun.sleep(i < 50 ? 0 : 5);
	}
	throw new Error(`timed out waiting for ${what}`);
}

/** POST /api/documents/:id/builds as ana's page. */
export async function startRun(
	s: BuildsSetup,
	body: Record<string, unknown> = {},
	jar: CookieJar = s.jar,
): Promise<{ status: number; build: BuildView; body: Record<string, unknown> }> {
	const res = await pageRequest(s.target, jar, "POST", `/api/documents/${s.documentId}/builds`, {
		kind: "build",
		brief: "Do step one.",
		base: BASE,
		...body,
	});
	const json = (await res.json()) as { build: BuildView } & Record<string, unknown>;
	return { status: res.status, build: json.build, body: json };
}

/** A run as ana's page reads it. */
export async function readRun(s: BuildsSetup, id: string, jar: CookieJar = s.jar): Promise<BuildView> {
	const res = await pageRequest(s.target, jar, "GET", `/api/builds/${id}`);
	if (res.status !== 200)
		throw new Error(`GET /api/builds/${id} answered ${res.status}: ${await res.text()}`);
	return ((await res.json()) as { build: BuildView }).build;
}

/** Claims the offer from the machine and returns the run credential. */
export async function claim(client: MachineClient, runId: string): Promise<string> {
	client.send({ type: "run-claim", run: runId });
	const claimed = await expectMessage(client, "run-claimed");
	if (claimed.run !== runId) throw new Error(`claimed ${claimed.run}, not ${runId}`);
	return claimed.token;
}

/** A run started on the page, offered, claimed by the setup's machine and reported running. */
export async function runningRun(s: BuildsSetup): Promise<BuildView> {
	const { build } = await startRun(s);
	await expectMessage(s.machine, "run-offer");
	await claim(s.machine, build.id);
	s.machine.send({ type: "run-status", run: build.id, status: "running" });
	await sync(s, s.machine);
	return build;
}

/** The document's live events from now on. */
export function liveEvents(s: BuildsSetup): LiveEvent[] {
	const seen: LiveEvent[] = [];
	s.server.context.domain.hub.subscribe(s.documentId, (event) => seen.push(event));
	return seen;
}

/** A run as a hello or report lists it. */
export function held(id: string, status: RunState["status"], extra: Partial<RunState> = {}): RunState {
	return { id, status, worktree: `/home/ana/.chopin/runs/${id}/workspace`, kind: "build", ...extra };
}
