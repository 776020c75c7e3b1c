// A server clock that runs with the real one but 10 minutes behind, less `dueAfterMs`: a daemon on the real clock
// finds each 15-minute Planner credential due for renewal (5 minutes before it ends) `dueAfterMs` after it was
// issued, so tests see renewals every few seconds without any knob in the daemon.
import { ManualClock } from "../../../packages/agent-link/src/clock";

export function renewingServerClock(dueAfterMs: number): { clock: ManualClock; stop(): void } {
	const clock = new ManualClock(Date.now() - 10 * 60_000 + dueAfterMs);
	let last = Date.now();
	const ticking = setInterval(() => {
		const now = Date.now();
		void clock.advance(now - last);
		last = now;
	}, 50);
	return { clock, stop: () => clearInterval(ticking) };
}
