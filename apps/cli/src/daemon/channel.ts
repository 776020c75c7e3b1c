// One control-channel socket from upgrade to close: a refusal's body read through ws, hello then welcome, frames
// checked with zod, a silent socket dropped, and its whole life summed up in one Outcome for the reconnect loop.

import type { Clock, Timer } from "@chopin/agent-link/clock";
import { parseJsonWithin } from "@chopin/agent-link/json-depth";
import {
	type ErrorBody,
	encodeMachineClientMessage,
	MACHINE_MAX_FRAME_BYTES,
	MACHINE_SUBPROTOCOL,
	type MachineClientMessage,
	type MachineServerMessage,
	parseMachineServerFrame,
} from "@chopin/agent-link/machine";
import type { WebSocket } from "ws";
import type { Logger } from "../local/log";
import type { OpenWebSocket } from "../program/context";
import { readErrorBody } from "../server-link/server-errors";

type Welcome = Extract<MachineServerMessage, { type: "welcome" }>;
type Revoked = Extract<MachineServerMessage, { type: "revoked" }>;

/** How one socket ended. */
export type ChannelOutcome =
	/** The server refused the upgrade with an HTTP status (and usually a JSON body). */
	| { kind: "refused"; status: number; body: ErrorBody | undefined }
	/** It never got going: a network error, or no upgrade or welcome within the handshake timeout. */
	| { kind: "failed"; reason: string; opened: boolean }
	/** It opened and then closed: by the server, by the network, or dropped by us for silence. */
	| {
			kind: "closed";
			code: number;
			reason: string;
			welcomed: boolean;
			revoked?: Revoked;
			/** `restarting` came before the close: the server said how soon it will be back. */
			restartingWithinMs?: number;
			/** We dropped it: nothing came from the server for the silence limit. */
			silent?: boolean;
	  }
	/** We ended it: to stop, or because a probe after a wake or network change got no answer. */
	| { kind: "ended"; why: "stop" | "probe" | "trigger"; welcomed: boolean };

export interface ChannelOptions {
	/** The server's origin (http or https); the socket goes to its /api/v1/machine. */
	url: string;
	headers: Record<string, string>;
	open: OpenWebSocket;
	clock: Clock;
	log: Logger;
	/** How long the upgrade and the welcome after it may take. */
	handshakeTimeoutMs: number;
	/** No frame (a message, ping or pong) from the server for this long: the socket is dead. */
	silenceMs: number;
	/** The hello, built when the socket opens so it carries the state of that moment. */
	hello: () => MachineClientMessage;
	onWelcome(welcome: Welcome): void;
	onMessage(message: MachineServerMessage): void;
	/** Any frame from the server: the last contact. */
	onContact(at: number): void;
}

/** A graceful close waits this long for the server's close frame before the socket is cut. */
const CLOSE_WAIT_MS = 2_000;

export class Channel {
	readonly done: Promise<ChannelOutcome>;
	readonly #o: ChannelOptions;
	readonly #ws: WebSocket;
	#settle!: (outcome: ChannelOutcome) => void;
	#settled = false;
	#opened = false;
	#welcomed = false;
	#revoked: Revoked | undefined;
	#restartingWithinMs: number | undefined;
	#ending: "stop" | "probe" | "trigger" | undefined;
	#handshake: Timer | undefined;
	#silence: Timer | undefined;
	#probe: Timer | undefined;
	#closeWait: Timer | undefined;

	constructor(options: ChannelOptions) {
		this.#o = options;
		this.done = new Promise((resolve) => {
			this.#settle = resolve;
		});
		const url = `${options.url.replace(/^http/, "ws")}/api/v1/machine`;
		this.#ws = options.open(url, [MACHINE_SUBPROTOCOL], {
			headers: options.headers,
			perMessageDeflate: false,
			followRedirects: false,
			maxPayload: MACHINE_MAX_FRAME_BYTES,
		});
		this.#handshake = options.clock.setTimeout(() => {
			const seconds = Math.round(options.handshakeTimeoutMs / 1000);
			this.#fail(
				this.#opened ? `no welcome within ${seconds} s of the upgrade` : `no answer within ${seconds} s`,
			);
		}, options.handshakeTimeoutMs);
		this.#listen();
	}

	/** The upgrade succeeded: the server answered on this socket. */
	get opened(): boolean {
		return this.#opened;
	}

	get welcomed(): boolean {
		return this.#welcomed;
	}

	/** Sends a message once welcomed; before that (or after the end) it is dropped and false returned. */
	send(message: MachineClientMessage): boolean {
		if (!this.#welcomed || this.#settled) return false;
		this.#ws.send(encodeMachineClientMessage(message));
		return true;
	}

	/**
	 * After a wake or a network change the socket may be dead without knowing it: ping, and drop it
	 * when nothing comes back within probeMs. A socket still connecting is dropped at once, as its
	 * attempt may be stuck on a network that is gone.
	 */
	probe(probeMs: number): void {
		if (this.#settled) return;
		if (!this.#opened) {
			this.#end("trigger");
			return;
		}
		if (this.#probe) return;
		this.#probe = this.#o.clock.setTimeout(() => this.#end("probe"), probeMs);
		try {
			this.#ws.ping();
		} catch {
			this.#end("probe");
		}
	}

	/** Closes with 1000 (the daemon is stopping) and waits briefly for the server's close frame. */
	close(): Promise<ChannelOutcome> {
		if (this.#settled || this.#ending) return this.done;
		this.#ending = "stop";
		if (!this.#opened) {
			this.#finish({ kind: "ended", why: "stop", welcomed: false });
			return this.done;
		}
		this.#ws.close(1000, "stopping");
		this.#closeWait = this.#o.clock.setTimeout(
			() => this.#finish({ kind: "ended", why: "stop", welcomed: this.#welcomed }),
			CLOSE_WAIT_MS,
		);
		return this.done;
	}

	#listen(): void {
		const ws = this.#ws;
		ws.on("unexpected-response", (_req, res) => {
			let text = "";
			res.setEncoding?.("utf8");
			res.on("data", (chunk: string | Buffer) => {
				if (text.length < 64 * 1024) text += String(chunk);
			});
			res.on("end", () => {
				const json = parseJsonWithin(text);
				this.#finish({
					kind: "refused",
					status: res.statusCode ?? 0,
					body: json.ok ? readErrorBody(json.value) : undefined,
				});
			});
		});
		ws.on("open", () => {
			this.#opened = true;
			this.#heard();
			ws.send(encodeMachineClientMessage(this.#o.hello()));
		});
		ws.on("message", (data, isBinary) => {
			this.#heard();
			const parsed = parseMachineServerFrame(isBinary ? new Uint8Array(data as Buffer) : String(data));
			if (!parsed.ok) {
				this.#o.log.error({ error: parsed.error }, "the server sent a frame chopin cannot read");
				// A Node.js client may close only with 1000 or 3000-4999: 4400 is the spec's malformed-message.
				ws.close(4400, "malformed-message");
				return;
			}
			this.#handle(parsed.message);
		});
		ws.on("ping", () => this.#heard());
		ws.on("pong", () => this.#heard());
		ws.on("error", (error: Error) => {
			if (!this.#opened) this.#fail(error.message || "the connection failed");
			else this.#o.log.debug({ err: error }, "control channel socket error");
		});
		ws.on("close", (code: number, reason: Buffer) => {
			if (this.#ending) {
				this.#finish({ kind: "ended", why: this.#ending, welcomed: this.#welcomed });
				return;
			}
			if (!this.#opened) {
				this.#fail(`the connection closed before the upgrade (${code})`);
				return;
			}
			this.#finish({
				kind: "closed",
				code,
				reason: String(reason),
				welcomed: this.#welcomed,
				...(this.#revoked ? { revoked: this.#revoked } : {}),
				...(this.#restartingWithinMs !== undefined ? { restartingWithinMs: this.#restartingWithinMs } : {}),
			});
		});
	}

	#handle(message: MachineServerMessage): void {
		switch (message.type) {
			case "welcome":
				this.#welcomed = true;
				this.#handshake?.cancel();
				this.#o.onWelcome(message);
				break;
			case "revoked":
				this.#revoked = message;
				break;
			case "restarting":
				this.#restartingWithinMs = message.reconnectWithinMs;
				break;
			case "error":
				this.#o.log.error({ code: message.code, reason: message.message }, "the server refused a message");
				break;
			case "planners":
				break;
		}
		this.#o.onMessage(message);
	}

	/** Any frame: the socket is alive. Resets the silence limit and answers a pending probe. */
	#heard(): void {
		if (this.#settled) return;
		const { clock, silenceMs } = this.#o;
		this.#o.onContact(clock.now());
		this.#probe?.cancel();
		this.#probe = undefined;
		this.#silence?.cancel();
		this.#silence = clock.setTimeout(() => {
			this.#o.log.warn(
				{ silenceMs },
				"nothing from the server for too long: the control channel is dead; reconnecting",
			);
			this.#finish({
				kind: "closed",
				code: 1006,
				reason: "silent",
				welcomed: this.#welcomed,
				silent: true,
			});
		}, silenceMs);
	}

	#fail(reason: string): void {
		this.#finish({ kind: "failed", reason, opened: this.#opened });
	}

	#end(why: "probe" | "trigger"): void {
		this.#finish({ kind: "ended", why, welcomed: this.#welcomed });
	}

	#finish(outcome: ChannelOutcome): void {
		if (this.#settled) return;
		this.#settled = true;
		for (const timer of [this.#handshake, this.#silence, this.#probe, this.#closeWait]) timer?.cancel();
		// Whatever still happens on this socket (its close, late frames) belongs to nobody now.
		this.#ws.removeAllListeners();
		this.#ws.on("error", () => {});
		if (this.#ws.readyState !== 3) this.#ws.terminate();
		this.#settle(outcome);
	}
}
