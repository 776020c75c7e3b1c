// The backend's life (spec: What the backend must do): attach with a credential read fresh each time,
// answer turns, and after a drop attach again and resume on a backoff until a decision ends it; detach
// and return 0 on a stop signal. Every line it logs is redacted of every credential it has read.
import type { Backoff } from "@chopin/agent-link/backoff";
import { reconnectBackoff } from "@chopin/agent-link/backoff";
import {
	type AgentLink,
	type ConnectOptions,
	connectAgent,
	isRetryable,
	type LinkClosed,
	LinkError,
	type ReconnectEvent,
	Refused,
	reconnectAgent,
	UpgradeRefused,
	type WebSocketConstructor,
} from "@chopin/agent-link/client";
import type { Clock } from "@chopin/agent-link/clock";
import { createRedactor } from "@chopin/agent-link/redact";
import { answerTurn } from "./echo";
import { describeFailure, EXIT } from "./errors";
import { readToken, type Settings } from "./settings";

/** Everything the backend reaches outside itself, built once in main.ts. */
export interface BackendContext {
	settings: Settings;
	readFile(path: string): Promise<string>;
	/** One line of status (stderr); the backend has redacted it. */
	log(line: string): void;
	clock: Clock;
	/** Aborts on SIGTERM or SIGINT: detach and return. */
	signal: AbortSignal;
	/** The attach backoff; default reconnectBackoff() (1, 2, 5, 10, 20, 30 s, then every minute). */
	backoff?: Backoff;
	WebSocket?: WebSocketConstructor;
}

/** Runs until a stop signal (0) or a decision that ends it, which it throws for main to print. */
export async function runBackend(ctx: BackendContext): Promise<number> {
	const { settings, clock, signal } = ctx;
	const secrets = new Set<string>();
	if (settings.token) secrets.add(settings.token);
	const say = (line: string) => ctx.log(createRedactor(secrets)(line));
	const backoff = ctx.backoff ?? reconnectBackoff();

	const options = async (): Promise<ConnectOptions> => {
		// Read before every attempt: the connector renews the file before the credential expires.
		const token = await readToken(settings, ctx.readFile);
		secrets.add(token);
		return {
			url: settings.url,
			token,
			document: settings.document,
			signal,
			clock,
			WebSocket: ctx.WebSocket,
			onError: (error) => say(`error: ${describeFailure(error).line}`),
			handlers: {
				start: () => {},
				turn: (turn) => answerTurn(turn, say),
				// The echo runs no workflows, so there is nothing to pause or resume.
				stop: () => ({ ok: true }),
				resume: () => ({ ok: true }),
				restarting: (ms) => say(`Chopin is restarting; it expects to be back within ${ms} ms.`),
			},
		};
	};

	// A 401 with a token file may be a credential the connector has renewed since; planner-attached may
	// be this machine's own stale link, which Chopin notices within its timeout.
	const shouldRetry = (error: unknown) =>
		isRetryable(error) ||
		(error instanceof Refused && error.code === "planner-attached") ||
		(error instanceof UpgradeRefused && error.status === 401 && settings.tokenFile !== undefined);

	const onEvent = (event: ReconnectEvent) => {
		if (event.type === "waiting") say(`attaching again in ${event.ms} ms`);
		else if (event.type === "failed") say(`attach failed: ${describeFailure(event.error).line}`);
	};

	/** Attaches afresh (nothing to resume), on the backoff while it is refused in a way worth retrying. */
	const attachFresh = async (waitFirst: boolean): Promise<AgentLink> => {
		for (let wait = waitFirst; ; wait = true) {
			if (wait) {
				const ms = backoff.next();
				say(`attaching again in ${ms} ms`);
				await clock.sleep(ms, signal);
			}
			try {
				const link = await connectAgent(await options());
				backoff.reset();
				return link;
			} catch (error) {
				if (!shouldRetry(error)) throw error;
				onEvent({ type: "failed", attempt: 0, error });
			}
		}
	};

	const stopped = new Promise<void>((resolve) => {
		if (signal.aborted) resolve();
		else signal.addEventListener("abort", () => resolve(), { once: true });
	});

	let closed: LinkClosed | undefined;
	let waitFirst = false;
	while (!signal.aborted) {
		let link: AgentLink;
		try {
			link = closed
				? await reconnectAgent(options, closed, { clock, backoff, signal, shouldRetry, onEvent })
				: await attachFresh(waitFirst);
		} catch (error) {
			if (signal.aborted) break;
			// The resume was refused for good (another link holds the document): attach afresh instead.
			if (error instanceof LinkError && error.code === "resume-unavailable") {
				closed = undefined;
				waitFirst = true;
				continue;
			}
			throw error;
		}
		const { document, features } = link.attached;
		// A server that does not grant resumable-sessions resumes nothing: the link starts afresh.
		const again = !closed
			? ""
			: link.features.has("resumable-sessions")
				? `, resumed with ${link.sessions.size} session(s)`
				: ", afresh (nothing resumed)";
		say(
			`attached to "${document.title}" (${document.repository}) as its Planner${again}; features: ${features.join(", ") || "none"}`,
		);

		const ended = await Promise.race([link.closed, stopped.then(() => undefined)]);
		if (!ended) {
			await link.detach();
			say("stopped: detached from the document");
			return EXIT.ok;
		}
		if (ended.error) {
			throw new LinkError(
				"server-error",
				`The link ended with a protocol error (${ended.error.code}): ${ended.error.message}`,
			);
		}
		if (ended.refused && !ended.refused.retry) {
			if (ended.refused.code !== "planner-attached") {
				throw new Refused({ type: "refused", code: ended.refused.code, message: ended.refused.message });
			}
			say(`refused planner-attached: ${ended.refused.message} Trying again on the backoff.`);
			closed = undefined;
			waitFirst = true;
			continue;
		}
		say(`the link dropped (close ${ended.code}${ended.reason ? ` ${ended.reason}` : ""}); attaching again`);
		closed = ended;
	}
	say("stopped");
	return EXIT.ok;
}
