/**
 * What connectAgent takes: where to connect, as whom, what to ask for, and the backend's
 * handlers. Also the two things derived from it before a socket opens: the endpoint URL and the
 * features the client asks for.
 */
import { z } from "zod";
import type { Clock } from "../clock";
import { type Feature, featureSchema } from "../features";
import { AGENT_PATH } from "../protocol";
import { type Catalog, catalogSchema } from "../schemas/catalog";
import { checkoutSchema } from "../schemas/handshake";
import { LinkError } from "./errors";
import type { LinkResume } from "./resume";
import type { Session } from "./session";
import type { WebSocketConstructor } from "./transport";
import type { Turn } from "./turn";

/** The answer to stop, resume and steer; message is cut to 4000 characters. */
export interface ControlAnswer {
	ok: boolean;
	message?: string;
}

type MaybePromise<T> = T | Promise<T>;

/** The backend: the client calls these as the server asks. Every handler may be sync or async. */
export interface Handlers {
	/** start: resolve to answer started, throw to answer start-failed with the error's message. */
	start(session: Session): MaybePromise<void>;
	/** fork (session-forks, asked for only when this is set): as start, branched from session.from. */
	fork?(session: Session): MaybePromise<void>;
	/** turn: run it; resolving without turn.end() ends it finished, throwing ends it failed. */
	turn(turn: Turn): MaybePromise<void>;
	/** Stop Planner: pause every workflow run of the session, or only run. */
	stop(session: Session, run?: string): MaybePromise<ControlAnswer>;
	/** Resume Planner: resume every workflow run of the session, or only run. */
	resume(session: Session, run?: string): MaybePromise<ControlAnswer>;
	/** steer (steer-turn, asked for only when this is set): hand prompt to the running turn. */
	steer?(turn: Turn, prompt: string): MaybePromise<ControlAnswer>;
	/** The session ended: destroy, a session resumed lists no more, or the link ended for good. */
	destroy?(session: Session): MaybePromise<void>;
	/** restarting (restart-notice): the server will close with 1012 and be back within ms. */
	restarting?(reconnectWithinMs: number): void;
}

/** The plain-data part of the options, checked before anything is opened. */
export const connectDataSchema = z.object({
	/** The Chopin origin (https:, or http: for a loopback development server). */
	url: z.string().min(1),
	/** The bearer: a GitHub token or a chopin_p_ Planner credential. Never logged, never in errors. */
	token: z.string().min(1),
	/** A document id or its Chopin URL. */
	document: z.string().min(1).max(2048),
	checkout: checkoutSchema.optional(),
	/** Extra features to ask for beyond the ones the client asks for itself. */
	features: z.array(featureSchema).optional(),
	/** Ask for resumable-sessions (and restart-notice); default true. */
	resumable: z.boolean().optional(),
	/** Allow ws:// to a host that is not loopback (the bearer then crosses the network in clear). */
	allowInsecure: z.boolean().optional(),
});

export type ConnectOptions = z.infer<typeof connectDataSchema> & {
	/** What a previous link's closed settled with, to resume its sessions. */
	resume?: LinkResume;
	/** A WebSocket class: Bun's global by default; pass the ws package's on Node 20. */
	WebSocket?: WebSocketConstructor;
	handlers: Handlers;
	/** For the client's own timers (the 10-second answers). */
	clock?: Clock;
	/** Aborts connecting (not an open link: detach that). */
	signal?: AbortSignal;
	/**
	 * The models, thinking levels and commands the backend offers (capability-catalog, which it then asks for):
	 * reported right after attached, and after resumed on a resumed link, on every connect. A function is read
	 * at each connect, so a reconnect reports the offer as it is then. Report a change later with
	 * link.reportCapabilities. A server that does not grant the feature is sent nothing.
	 */
	capabilities?: Catalog | (() => Catalog);
	/** Errors with nowhere else to go: a destroy or restarting handler that threw. */
	onError?: (error: unknown) => void;
};

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/** wss://<origin>/api/v1/agent from the Chopin origin; ws: only for loopback unless allowed. */
export function endpointUrl(origin: string, allowInsecure = false): string {
	let parsed: URL;
	try {
		parsed = new URL(origin);
	} catch {
		throw new LinkError(
			"invalid-options",
			"The url option is not a URL.",
			"Pass the Chopin origin, such as https://chopin.example.",
		);
	}
	const secure = parsed.protocol === "https:" || parsed.protocol === "wss:";
	if (!secure && parsed.protocol !== "http:" && parsed.protocol !== "ws:") {
		throw new LinkError(
			"invalid-options",
			"The url option must be an https: or http: URL.",
			"Pass the Chopin origin, such as https://chopin.example.",
		);
	}
	if (!secure && !allowInsecure && !LOOPBACK.test(parsed.hostname)) {
		throw new LinkError(
			"insecure-url",
			"The agent connection uses plain ws: only for a loopback development server.",
			"Use the server's https: origin, or pass allowInsecure: true for a trusted network.",
		);
	}
	return `${secure ? "wss" : "ws"}://${parsed.host}${AGENT_PATH}`;
}

/** What the client asks for: resuming (unless opted out), deltas, the features its handlers serve, and the extras. */
export function requestedFeatures(options: ConnectOptions): Feature[] {
	const out = new Set<Feature>(["run-stage-deltas"]);
	if (options.resumable !== false) {
		out.add("resumable-sessions");
		out.add("restart-notice");
	}
	if (options.handlers.fork) out.add("session-forks");
	if (options.handlers.steer) out.add("steer-turn");
	if (options.capabilities) out.add("capability-catalog");
	for (const feature of options.features ?? []) out.add(feature);
	return [...out];
}

/** Checks the options' data and handlers, with one sentence naming the first problem. */
export function checkOptions(options: ConnectOptions): void {
	const parsed = connectDataSchema.safeParse(options);
	if (!parsed.success) {
		const field = parsed.error.issues[0]?.path.join(".") || "options";
		throw new LinkError(
			"invalid-options",
			`The ${field} option is not valid.`,
			"See ConnectOptions in docs/protocol.md.",
		);
	}
	const { capabilities } = options;
	if (
		capabilities !== undefined &&
		typeof capabilities !== "function" &&
		!catalogSchema.safeParse(capabilities).success
	) {
		throw new LinkError(
			"invalid-options",
			"The capabilities option is not a valid catalog.",
			"See Capability catalog in docs/protocol.md: only a value of the wrong type is refused.",
		);
	}
	const handlers = options.handlers as Partial<Handlers> | undefined;
	for (const name of ["start", "turn", "stop", "resume"] as const) {
		if (typeof handlers?.[name] !== "function") {
			throw new LinkError(
				"invalid-options",
				`The handlers.${name} option must be a function.`,
				"See Handlers in docs/protocol.md.",
			);
		}
	}
}
