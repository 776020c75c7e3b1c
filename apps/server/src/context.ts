// The one injected context: config, clock, store, logger, secret key, sockets. Built once at start; tests override its edges.
import { type Clock, systemClock } from "@chopin/agent-link/clock";
import { createPlannerService, type PlannerService } from "./agent/planner-service";
import { createIdentity, type Identity } from "./auth/identity";
import { Sessions } from "./auth/sessions";
import { Builds } from "./builds/service";
import type { Config } from "./config";
import { ensureDataDir, loadSecretKey } from "./data-dir";
import { createDomain, type Domain, startDomain } from "./domain";
import { SocketRegistry } from "./http/sockets";
import { createLogger, type Logger } from "./log";
import { connectMachinesToBuilds, machinePort } from "./machine-builds";
import { connectMachinesToPlanner } from "./machine-planners";
import { Machines } from "./machines/service";
import { Secret } from "./secret";
import { migrate } from "./store/migrate";
import { openStore, type Store } from "./store/store";
import { VERSION } from "./version";

export interface AppContext {
	/**
	 * The validated configuration. `publicUrl` is final once the server listens (port 0 is
	 * replaced then): read it while handling a request, not while registering routes.
	 */
	readonly config: Config;
	readonly clock: Clock;
	readonly store: Store;
	readonly log: Logger;
	/** 32 bytes that encrypt secrets at rest (GitHub tokens). */
	readonly secretKey: Secret<Uint8Array>;
	readonly version: string;
	/** Register WebSocket kinds here; routes upgrade with `ctx.upgrade({ kind, ... })`. */
	readonly sockets: SocketRegistry;
	/** For outbound HTTP (GitHub); tests may point it elsewhere. */
	readonly fetch: typeof fetch;
	/** Sign-in, bearers, permissions and admission, for AUTH_MODE (auth/identity.ts). */
	readonly identity: Identity;
	/** Browser sessions and the live sign-ins of this process (auth/sessions.ts). */
	readonly sessions: Sessions;
	/** Documents, images, Chat, Decisions, run cards and the live hub (domain.ts). */
	readonly domain: Domain;
	/** Paired machines: pairing, credentials, the control channel, machine choice (machines/service.ts). */
	readonly machines: Machines;
	/** Builds and investigations on paired machines, and their runs' credentials for /mcp (builds/service.ts). */
	readonly builds: Builds;
	/** The agent endpoint: attached Planners, @chopin messages (handleMessage), Reset/Stop/Resume (agent/planner-service.ts). */
	readonly planner: PlannerService;
	/**
	 * Runs fn when the server stops, before remaining sockets are closed and before the store
	 * closes: the place to close a domain's sockets with its own code. Latest registered runs first.
	 */
	onStop(fn: () => void | Promise<void>): void;
}

/** What a test (or main) may supply instead of the defaults. */
export interface ContextOverrides {
	clock?: Clock;
	/** A store the caller owns: it is migrated, but not closed at stop. */
	store?: Store;
	log?: Logger;
	fetch?: typeof fetch;
}

interface Internals {
	stopHooks: (() => void | Promise<void>)[];
	ownsStore: boolean;
}

const internals = new WeakMap<AppContext, Internals>();

/** Creates DATA_DIR, loads the secret key, opens and migrates the store. */
export async function createContext(config: Config, overrides: ContextOverrides = {}): Promise<AppContext> {
	const clock = overrides.clock ?? systemClock();
	// Configured secrets are masked in every log line besides the token shapes redactTokens knows.
	// Not local passwords: nothing logs them, and masking a short word everywhere would garble the log.
	const secrets = [
		config.github.clientSecret?.reveal(),
		...(config.localAccounts?.users ?? []).map((u) => u.token?.reveal()),
	].filter((s): s is string => !!s);
	const log = overrides.log ?? createLogger({ level: config.logLevel, clock, secrets });
	ensureDataDir(config.dataDir);
	const secretKey = new Secret(loadSecretKey({ dataDir: config.dataDir, secretKey: config.secretKey }));
	const url =
		config.database.kind === "postgres" ? config.database.url.reveal() : `sqlite://${config.database.path}`;
	const store = overrides.store ?? (await openStore({ url }));
	try {
		const applied = await migrate(store, { now: () => clock.now() });
		if (applied.length) log.info("migrations applied", { store: store.label, versions: applied });
	} catch (error) {
		if (!overrides.store) await store.close();
		throw error;
	}
	const stopHooks: Internals["stopHooks"] = [];
	const outbound = overrides.fetch ?? fetch;
	const identity = createIdentity({ config, clock, log, fetch: outbound, secretKey, version: VERSION });
	const sessions = new Sessions({ store, clock, log, identity, ttlMs: config.sessionTtlMs });
	// Timers of live sessions must not outlive the server.
	stopHooks.push(() => sessions.close());
	// Sessions that expired while no process watched them: their rows go now.
	const swept = await sessions.sweep();
	if (swept) log.info("expired sessions deleted", { count: swept });
	const domain = createDomain({ store, clock, log, config });
	await startDomain(domain, { config, log });
	// Reads the context's config: PUBLIC_URL is final only once the server listens.
	const machines = new Machines({
		config: () => context.config,
		clock,
		log,
		store,
		identity,
		domain,
		version: VERSION,
	});
	machines.start();
	stopHooks.push(() => machines.stop());
	const builds = new Builds({
		store,
		clock,
		log: log.child({ component: "builds" }),
		hub: domain.hub,
		documents: domain.documents,
		settings: () => ({
			publicUrl: context.config.publicUrl,
			offlineGraceMs: context.config.machines.offlineGraceMs,
		}),
		machines: machinePort(machines),
	});
	stopHooks.push(async () => {
		builds.shutdown();
		await builds.settled();
	});
	const context: AppContext = {
		// A copy: starting on port 0 fills in publicUrl, and the caller's config must stay as given.
		config: { ...config },
		clock,
		store,
		log,
		secretKey,
		version: VERSION,
		sockets: new SocketRegistry(log),
		fetch: outbound,
		identity,
		sessions,
		domain,
		machines,
		builds,
		planner: createPlannerService({
			get config() {
				return context.config;
			},
			clock,
			log,
			identity,
			sessions,
			domain,
			store,
		}),
		onStop: (fn) => {
			stopHooks.push(fn);
		},
	};
	stopHooks.push(connectMachinesToPlanner(machines, context.planner));
	stopHooks.push(connectMachinesToBuilds(machines, builds));
	internals.set(context, { stopHooks, ownsStore: !overrides.store });
	// Before anything streams: replies a killed process left streaming fail, saying so.
	const interrupted = await domain.chat.replies.failInterrupted();
	if (interrupted > 0) log.info("replies left streaming by the last process failed", { count: interrupted });
	// Once the context exists: the builds' settings read its config.
	await builds.boot();
	return context;
}

/** Runs the onStop hooks, latest first; a failing hook is logged and the rest still run. */
export async function runStopHooks(context: AppContext): Promise<void> {
	const hooks = internals.get(context)?.stopHooks.splice(0) ?? [];
	for (const hook of hooks.reverse()) {
		try {
			await hook();
		} catch (error) {
			context.log.error("stop hook failed", { error });
		}
	}
}

/** Closes what the context opened (the store, unless a test supplied it). */
export async function closeContext(context: AppContext): Promise<void> {
	if (internals.get(context)?.ownsStore) await context.store.close();
}
