// What every domain service is built from: the store, the clock, and the live hub it publishes changes to.
import type { Clock } from "@chopin/agent-link/clock";
import type { LiveHub } from "./live/hub";
import type { Logger } from "./log";
import type { Store } from "./store/store";

export interface DomainDeps {
	readonly store: Store;
	readonly clock: Clock;
	readonly hub: LiveHub;
	/** For failures that must not reach the caller (a listener's); optional in tests. */
	readonly log?: Logger;
}
