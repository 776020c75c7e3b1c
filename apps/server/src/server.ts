// Starts and stops the server: the context, the router and Bun.serve, in that order, and back.
import { systemClock } from "@chopin/agent-link/clock";
import type { Server } from "bun";
import type { Config } from "./config";
import { type AppContext, type ContextOverrides, closeContext, createContext, runStopHooks } from "./context";
import { HttpError } from "./http/errors";
import { isUpgradeResponse, Router } from "./http/router";
import type { SocketData } from "./http/sockets";
import { registerRoutes } from "./routes";
import { pageShell, startPageBundle } from "./web/shell";

export interface StartOverrides extends ContextOverrides {
	/** Extra routes, registered after the server's own (tests use it for routes that fail on purpose). */
	register?: (router: Router, ctx: AppContext) => void;
}

export interface RunningServer {
	/** The URL this process listens on, e.g. http://127.0.0.1:40123 (PUBLIC_URL may differ, behind a proxy). */
	readonly url: string;
	readonly port: number;
	readonly context: AppContext;
	/** The router's fetch, for requests that need no socket. */
	readonly fetch: (req: Request) => Promise<Response>;
	/** Stops listening, runs the onStop hooks, closes sockets (1012) and the store. Idempotent. */
	stop(): Promise<void>;
}

/** How long in-flight requests may take to finish once a stop begins. */
const DRAIN_MS = 5_000;

/** Builds the router with every route registered; what startServer serves, and what route tests call. */
export function buildRouter(context: AppContext, register?: StartOverrides["register"]): Router {
	const router = new Router({
		maxBodyBytes: context.config.maxBodyBytes,
		log: context.log,
		origin: () => context.config.publicUrl,
		fallback: (req, url) => pageShell(context).asset(req, url),
	});
	registerRoutes(router, context);
	register?.(router, context);
	return router;
}

export async function startServer(config: Config, overrides: StartOverrides = {}): Promise<RunningServer> {
	const context = await createContext(config, overrides);
	let server: Server<SocketData>;
	let router: Router;
	let bundle: Server<undefined> | undefined;
	try {
		router = buildRouter(context, overrides.register);
		bundle = startPageBundle(config.dev);
		server = Bun.serve<SocketData>({
			hostname: config.host,
			port: config.port,
			// Bun's own limit would answer before our JSON 413 does; keep it above MAX_BODY_BYTES.
			maxRequestBodySize: Math.max(128 * 1024 * 1024, config.maxBodyBytes + 1),
			// No Bun routes: every response goes through the router and gets its security headers.
			// The pages' bundle is on a loopback server of its own (web/shell.ts).
			development: config.dev ? { hmr: false } : false,
			fetch: async (req, srv) => {
				const res = await router.fetch(req, srv);
				return isUpgradeResponse(res) ? undefined : res;
			},
			websocket: context.sockets.handler(),
			// The router answers every error itself; this only catches a failure outside it, and
			// keeps Bun's development error page (with its stack trace) from ever being sent.
			error: (error) => {
				context.log.error("unhandled server error", { error });
				return new HttpError(500, "internal", "Something went wrong on the server.").toResponse();
			},
		});
	} catch (error) {
		await bundle?.stop(true);
		await closeContext(context);
		throw error;
	}
	const port = server.port ?? config.port;
	pageShell(context).listen(bundle.url.origin);
	if (context.config.publicUrl === "http://localhost:0") {
		// PORT=0 without PUBLIC_URL: the default origin names the port the system picked.
		(context.config as { publicUrl: string }).publicUrl = `http://localhost:${port}`;
	}
	const host = config.host.includes(":") ? `[${config.host}]` : config.host;
	const url = `http://${host}:${port}`;
	context.log.info("listening", {
		url,
		publicUrl: context.config.publicUrl,
		store: context.store.label,
		version: context.version,
	});
	if (config.harness !== "remote") {
		context.log.warn(`HARNESS=${config.harness} is not implemented by this server; no Planner will run`, {});
	}

	let stopping: Promise<void> | undefined;
	const stop = () => {
		stopping ??= (async () => {
			context.log.info("stopping", {});
			// Stop accepting at once; idle keep-alive connections close, in-flight requests finish.
			const drained = server.stop(false);
			await runStopHooks(context);
			context.sockets.closeAll(1012, "server restarting");
			// A real timer on purpose: a test's ManualClock must not hold a stop open.
			await Promise.race([drained, systemClock({ unref: true }).sleep(DRAIN_MS)]);
			await server.stop(true);
			await bundle.stop(true);
			await closeContext(context);
			context.log.info("stopped", {});
		})();
		return stopping;
	};
	return { url, port, context, fetch: (req) => router.fetch(req), stop };
}
