// After a restart, a returning account's resume waits inside the hand-over window for the owner's browser sign-in,
// which the browser's cookie restores on the new process (spec: After a server restart). Once it is back the
// sign-in is checked as at attach; when the window is over without it the resume is refused unavailable with
// retry and the hold stays for the next try.
import type { Clock } from "@chopin/agent-link/clock";
import type { Sessions } from "../auth/sessions";

/**
 * Resolves true once `login` has a live sign-in on this process (at once when it has one), or false when `until`
 * (ms on the clock) passes first or is undefined or past.
 */
export function waitForSignIn(
	sessions: Sessions,
	clock: Clock,
	login: string,
	until?: number,
): Promise<boolean> {
	if (sessions.liveSignIn(login)) return Promise.resolve(true);
	const left = until === undefined ? 0 : until - clock.now();
	if (left <= 0) return Promise.resolve(false);
	return new Promise((resolve) => {
		const done = (back: boolean) => {
			off();
			timer.cancel();
			resolve(back);
		};
		const off = sessions.onSignIn((signIn) => {
			if (signIn.login.toLowerCase() === login.toLowerCase()) done(true);
		});
		const timer = clock.setTimeout(() => done(sessions.liveSignIn(login) !== null), left);
	});
}
