// One machine's control-channel socket: typed sends, refusals that close with their code, and messages handled one at a time.
import type { ClientInfo, MachineServerMessage } from "@chopin/agent-link/machine";
import { encodeMachineServerMessage, MACHINE_CLOSE, MACHINE_REFUSALS } from "@chopin/agent-link/machine";
import type { Socket, SocketData } from "../http/sockets";
import type { Logger } from "../log";
import type { MachineRefusal } from "./errors";
import type { Liveness } from "./liveness";

export const MACHINE_SOCKET_KIND = "machine";

export interface MachineSocketData extends SocketData {
	kind: typeof MACHINE_SOCKET_KIND;
	machineId: string;
	owner: string;
	client: ClientInfo;
	connection?: MachineConnection;
}

export type ConnectionState = "awaiting-hello" | "ready" | "closed";

export class MachineConnection {
	state: ConnectionState = "awaiting-hello";
	/** The Planner set changed while the hello was handled: send it once the welcome is out. */
	plannersDirty = false;
	liveness: Liveness | undefined;
	readonly openedAt: number;
	#chain: Promise<void> = Promise.resolve();

	constructor(
		readonly ws: Socket<MachineSocketData>,
		private readonly log: Logger,
		now: number,
	) {
		this.openedAt = now;
	}

	get machineId(): string {
		return this.ws.data.machineId;
	}

	get owner(): string {
		return this.ws.data.owner;
	}

	get client(): ClientInfo {
		return this.ws.data.client;
	}

	get open(): boolean {
		return this.state !== "closed";
	}

	send(message: MachineServerMessage): void {
		if (!this.open) return;
		this.ws.send(encodeMachineServerMessage(message));
	}

	/** `revoked` with the refusal, then the refusal's close code: the CLI stops for good. */
	refuse(refusal: MachineRefusal): void {
		this.send({ type: "revoked", code: refusal.code, message: refusal.message });
		this.close(MACHINE_REFUSALS[refusal.code].close, refusal.code);
	}

	/** A protocol error: `error`, then 1008 (1009 for a frame too large). */
	fail(code: "malformed-message" | "message-too-large", message: string): void {
		this.send({ type: "error", code, message });
		this.close(code === "message-too-large" ? MACHINE_CLOSE.tooLarge : MACHINE_CLOSE.protocol, code);
	}

	close(code: number, reason: string): void {
		if (!this.open) return;
		this.state = "closed";
		this.liveness?.stop();
		this.ws.close(code, reason);
	}

	/** Resolves once every message handled so far (and any queued meanwhile) is done. */
	async idle(): Promise<void> {
		let chain: Promise<void>;
		do {
			chain = this.#chain;
			await chain;
		} while (chain !== this.#chain);
	}

	/** Runs fn after the messages before it: a report never overtakes the hello it follows. */
	enqueue(fn: () => Promise<void>): Promise<void> {
		const next = this.#chain.then(() => (this.open ? fn() : undefined));
		this.#chain = next.catch((error: unknown) => {
			this.log.error("machine message failed", { machine: this.machineId, error });
			this.close(1011, "internal error");
		});
		return this.#chain;
	}
}
