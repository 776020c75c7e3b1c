// The control channel /api/v1/machine (chopin.machine.v1): refusals before the upgrade, one live socket per machine
// (a newer one replaces it at once), hello first, liveness on the injected clock, and `restarting` then 1012 at stop.
import type { Clock } from "@chopin/agent-link/clock";
import {
	MACHINE_CLOSE,
	MACHINE_PROTOCOL_VERSION,
	MACHINE_SUBPROTOCOL,
	type MachineClientMessage,
	type MachineServerMessage,
	parseMachineClientFrame,
} from "@chopin/agent-link/machine";
import { HttpError } from "../http/errors";
import { jsonResponse } from "../http/responses";
import { isForeignOrigin, type RouteContext } from "../http/router";
import type { SocketHandlers } from "../http/sockets";
import type { Logger } from "../log";
import { readClient, type VersionPolicy, versionRefusal } from "./client-version";
import { MACHINE_SOCKET_KIND, MachineConnection, type MachineSocketData } from "./connection";
import { type MachineRefusal, machineReauthorize, refusalError } from "./errors";
import { Liveness } from "./liveness";
import type { MachineAuth } from "./machine-auth";
import type { MachineState } from "./machine-rows";

type Hello = Extract<MachineClientMessage, { type: "hello" }>;
type PlannerEvent = Extract<MachineClientMessage, { type: "planner-event" }>;
/** A machine's messages about its builds and investigations (run-claim, run-status, run-log, run-control-result). */
export type RunClientMessage = Extract<
	MachineClientMessage,
	{ type: "run-claim" | "run-status" | "run-log" | "run-control-result" }
>;
type Welcome = Extract<MachineServerMessage, { type: "welcome" }>;

export interface ControlDeps {
	clock: Clock;
	log: Logger;
	auth: MachineAuth;
	settings(): {
		agent: boolean;
		pingMs: number;
		timeoutMs: number;
		maxSilenceMs: number;
		publicUrl: string;
		versionPolicy: VersionPolicy;
		/**
		 * Hellos handled at once beyond which new machines are asked to come back in a moment (503 server-busy
		 * with Retry-After, also on the ping a disconnected machine sends): after an outage every machine returns
		 * within seconds, and those that would only queue are spread over the next few (MACHINE_HELLOS_IN_FLIGHT).
		 */
		hellosInFlight: number;
	};
	/** The hello's state is stored and checked: the welcome to send, or a refusal that closes the socket. */
	hello(connection: MachineConnection, hello: Hello): Promise<Welcome | MachineRefusal>;
	/**
	 * The welcome went out: the machine is online. Awaited before the connection's next message is
	 * handled, so what it does with the hello's runs (offers sent again, runs it forgot) comes first.
	 */
	ready(connection: MachineConnection, hello: Hello): void | Promise<void>;
	report(connection: MachineConnection, state: MachineState): Promise<void>;
	plannerEvent(connection: MachineConnection, event: PlannerEvent): Promise<void>;
	/** A message about one of its runs. */
	run(connection: MachineConnection, message: RunClientMessage): Promise<void>;
	/** The machine's current socket closed (not one a newer socket replaced). */
	offline(machineId: string): void;
}

export class ControlChannel {
	readonly #deps: ControlDeps;
	/** Each machine's connection that said hello last. */
	readonly #connections = new Map<string, MachineConnection>();
	/** Upgraded and not yet said hello: they replace nothing until they do. */
	readonly #pending = new Set<MachineConnection>();
	#stopping = false;
	#hellosInFlight = 0;

	constructor(deps: ControlDeps) {
		this.#deps = deps;
	}

	/** True while the machine has a socket that said hello. */
	isOnline(machineId: string): boolean {
		return this.#connections.get(machineId)?.state === "ready";
	}

	/** The machines with a socket that said hello. */
	onlineIds(): string[] {
		return [...this.#connections.values()].filter((c) => c.state === "ready").map((c) => c.machineId);
	}

	connection(machineId: string): MachineConnection | undefined {
		return this.#connections.get(machineId);
	}

	/** Sends to the machine's socket once it said hello; false when it has none. */
	send(machineId: string, message: MachineServerMessage): boolean {
		const connection = this.#connections.get(machineId);
		if (connection?.state !== "ready") return false;
		connection.send(message);
		return true;
	}

	/** Whether new machines are asked to come back in a moment (too many hellos in flight). */
	shedding(): boolean {
		return this.#hellosInFlight >= this.#deps.settings().hellosInFlight;
	}

	/** Sends `revoked` and closes with the refusal's code, whatever state the socket is in. */
	refuse(machineId: string, refusal: MachineRefusal): void {
		this.#connections.get(machineId)?.refuse(refusal);
	}

	/**
	 * The upgrade, checked in this order before anything opens: 404 (AGENT off), 426
	 * subprotocol-required, 403 foreign Origin, 401 machine-revoked / machine-reauthorize, 400
	 * client-header-invalid, 426 client-version-refused.
	 */
	async upgrade(c: RouteContext): Promise<Response> {
		const settings = this.#deps.settings();
		if (!settings.agent) throw new HttpError(404, "not-found", "There is nothing here.");
		const offered = (c.req.headers.get("sec-websocket-protocol") ?? "").split(",").map((p) => p.trim());
		if (!offered.includes(MACHINE_SUBPROTOCOL)) {
			return jsonResponse(
				{
					code: "subprotocol-required",
					message: `The control channel speaks the WebSocket subprotocol ${MACHINE_SUBPROTOCOL}.`,
					supported: [MACHINE_SUBPROTOCOL],
				},
				{ status: 426 },
			);
		}
		if (isForeignOrigin(c.req, settings.publicUrl)) {
			throw new HttpError(403, "origin-forbidden", "This request comes from another site.");
		}
		if (this.shedding()) throw serverBusy();
		const checked = await this.#deps.auth.check(c.req.headers.get("authorization"));
		if (!checked.ok) throw refusalError(checked.refusal);
		if (checked.reauthorize) throw refusalError(machineReauthorize(checked.owner));
		const client = readClient(c.req);
		const refusal = versionRefusal(client, settings.versionPolicy);
		if (refusal) throw refusalError(refusal);
		// No contact is written here: the hello that follows stores the state and the contact in one write.
		const data: MachineSocketData = {
			kind: MACHINE_SOCKET_KIND,
			machineId: checked.id,
			owner: checked.owner,
			client,
		};
		const upgraded = c.upgrade(data, { headers: { "Sec-WebSocket-Protocol": MACHINE_SUBPROTOCOL } });
		if (upgraded) return upgraded;
		throw new HttpError(
			400,
			"websocket-required",
			"The control channel is a WebSocket.",
			"Open it as a WebSocket with the chopin.machine.v1 subprotocol.",
		);
	}

	/** The socket handlers to register under MACHINE_SOCKET_KIND. */
	handlers(): SocketHandlers<MachineSocketData> {
		return {
			open: (ws) => this.#opened(ws),
			message: (ws, data) => {
				const connection = ws.data.connection;
				if (!connection?.open) return;
				connection.liveness?.heard();
				const parsed = parseMachineClientFrame(typeof data === "string" ? data : new Uint8Array(data));
				if (!parsed.ok) {
					connection.fail(parsed.error.code, parsed.error.message);
					return;
				}
				const message = parsed.message;
				void connection.enqueue(() => this.#dispatch(connection, message));
			},
			pong: (ws) => ws.data.connection?.liveness?.heard(),
			close: (ws) => this.#closed(ws.data.connection),
		};
	}

	/** Resolves once every open connection has handled the messages it read so far (tests). */
	async settled(): Promise<void> {
		await Promise.all([...this.#connections.values(), ...this.#pending].map((c) => c.idle()));
	}

	/** Server stop: every socket hears `restarting`, then closes with 1012. */
	stop(reconnectWithinMs: number): void {
		this.#stopping = true;
		for (const connection of [...this.#connections.values(), ...this.#pending]) {
			connection.send({ type: "restarting", reconnectWithinMs });
			connection.close(MACHINE_CLOSE.restarting, "restarting");
		}
		this.#connections.clear();
		this.#pending.clear();
	}

	#opened(ws: MachineConnection["ws"]): void {
		const { clock, log } = this.#deps;
		const connection = new MachineConnection(ws, log, clock.now());
		ws.data.connection = connection;
		if (this.#stopping) {
			connection.close(MACHINE_CLOSE.restarting, "restarting");
			return;
		}
		this.#pending.add(connection);
		const settings = this.#deps.settings();
		connection.liveness = new Liveness({
			clock,
			pingMs: settings.pingMs,
			timeoutMs: settings.timeoutMs,
			maxSilenceMs: settings.maxSilenceMs,
			ping: () => ws.ping(),
			queued: () => ws.getBufferedAmount(),
			onDead: () => {
				log.info("machine connection unresponsive", { machine: connection.machineId });
				connection.close(MACHINE_CLOSE.unresponsive, "unresponsive");
			},
		});
		connection.liveness.start();
	}

	async #dispatch(connection: MachineConnection, message: MachineClientMessage): Promise<void> {
		if (connection.state === "awaiting-hello") {
			if (message.type !== "hello") {
				connection.fail("malformed-message", `The first message must be hello, not ${message.type}.`);
				return;
			}
			if (message.version !== MACHINE_PROTOCOL_VERSION) {
				connection.fail(
					"malformed-message",
					`This server speaks version ${MACHINE_PROTOCOL_VERSION} of the control channel, not ${message.version}.`,
				);
				return;
			}
			this.#replace(connection);
			this.#hellosInFlight += 1;
			let answer: Awaited<ReturnType<ControlDeps["hello"]>>;
			try {
				answer = await this.#deps.hello(connection, message);
			} finally {
				this.#hellosInFlight -= 1;
			}
			if (!connection.open) return;
			if ("code" in answer) {
				connection.refuse(answer);
				return;
			}
			connection.state = "ready";
			connection.send(answer);
			await this.#deps.ready(connection, message);
			return;
		}
		switch (message.type) {
			case "hello":
				connection.fail("malformed-message", "hello was already sent on this connection.");
				return;
			case "report": {
				const { type: _type, ...state } = message;
				await this.#deps.report(connection, state);
				return;
			}
			case "planner-event":
				await this.#deps.plannerEvent(connection, message);
				return;
			case "run-claim":
			case "run-status":
			case "run-log":
			case "run-control-result":
				await this.#deps.run(connection, message);
				return;
		}
	}

	/**
	 * The hello makes a connection the machine's: an older one with the same credential is stale (or another process
	 * serves it) and goes at once, counting against nothing. Not at the upgrade: in a reconnect storm the server may
	 * upgrade an attempt its machine already gave up (its handshake timed out) after the machine's next attempt is
	 * welcomed, and that dead socket would close the live one with 4409, which stops the machine for good (issue 19).
	 * A given-up attempt never says hello.
	 */
	#replace(connection: MachineConnection): void {
		this.#pending.delete(connection);
		const previous = this.#connections.get(connection.machineId);
		this.#connections.set(connection.machineId, connection);
		if (previous && previous !== connection) {
			this.#deps.log.info("machine connection replaced", { machine: connection.machineId });
			previous.close(MACHINE_CLOSE.replaced, "replaced");
		}
	}

	#closed(connection: MachineConnection | undefined): void {
		if (!connection) return;
		this.#pending.delete(connection);
		connection.state = "closed";
		connection.liveness?.stop();
		if (this.#stopping || this.#connections.get(connection.machineId) !== connection) return;
		this.#connections.delete(connection.machineId);
		this.#deps.offline(connection.machineId);
	}
}

/** 503 server-busy with a Retry-After of 1 to 3 s, drawn per answer so the machines told so do not return in step. */
export function serverBusy(): HttpError {
	const retryAfter = 1 + Math.floor(Math.random() * 3);
	return new HttpError(
		503,
		"server-busy",
		"Chopin is welcoming many machines at once; come back in a moment.",
		undefined,
		{ retryAfter },
		{ "retry-after": String(retryAfter) },
	);
}
