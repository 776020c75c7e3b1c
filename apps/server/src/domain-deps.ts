// What every domain service is built from: the store, the clock, and the live hub it publishes changes to.
import type { Clock } from "@chopin/agent-link/clock";
import type { LiveHub } from "./live/hub";
import type { Store } from "./store/store";

export interface DomainDeps {
	readonly store: Store;
	readonly clock: Clock;
	readonly hub: LiveHub;
}
