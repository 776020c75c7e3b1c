// What the agent endpoint is built from: the server's config (read late: PUBLIC_URL is final once it listens),
// clock, log, identity and sessions, and the domain services it drives.
import type { Clock } from "@chopin/agent-link/clock";
import type { Identity } from "../auth/identity";
import type { Sessions } from "../auth/sessions";
import type { Config } from "../config";
import type { Domain } from "../domain";
import type { Logger } from "../log";
import type { Store } from "../store/store";

export interface AgentDeps {
	/** Read at use: with PORT=0, publicUrl is filled in once the server listens. */
	readonly config: Config;
	readonly clock: Clock;
	readonly log: Logger;
	readonly identity: Identity;
	readonly sessions: Sessions;
	readonly domain: Domain;
	/** Where a restart's Planner holds and a document's choice of model and thinking level are kept. */
	readonly store: Store;
}

/** The 10 seconds start, abort, stop and resume are answered within (spec: Server to client). */
export const ANSWER_WITHIN_MS = 10_000;
/** Access is checked again this often while a link is attached (spec: Ownership). */
export const RECHECK_EVERY_MS = 5 * 60_000;
