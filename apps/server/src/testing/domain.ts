// Test helpers for the domain services: their deps on a test store, and a recorder of the live events they publish.
import { ManualClock } from "@chopin/agent-link/clock";
import type { DomainDeps } from "../domain-deps";
import type { LiveEvent, LiveEventType } from "../live/events";
import { LiveHub } from "../live/hub";
import type { Store } from "../store/store";

export interface TestDeps extends DomainDeps {
	readonly clock: ManualClock;
	/** Every event published, in order. */
	readonly events: LiveEvent[];
	/** The events of one type, in order. */
	eventsOf<T extends LiveEventType>(type: T): Extract<LiveEvent, { type: T }>[];
}

/** Deps on the given store with a ManualClock and a hub whose events are all recorded (and validated). */
export function testDeps(store: Store): TestDeps {
	const clock = new ManualClock();
	const hub = new LiveHub();
	const events: LiveEvent[] = [];
	hub.subscribeAll((_documentId, event) => events.push(event));
	return {
		store,
		clock,
		hub,
		events,
		eventsOf: <T extends LiveEventType>(type: T) =>
			events.filter((e): e is Extract<LiveEvent, { type: T }> => e.type === type),
	};
}
