// The status request, sent before `chopin status` loads the rest of itself: the daemon works out its answer while this
// process loads its status chunks, builds its context and reads its files (docs/install.md § Start-up time), where it
// used to wait for the answer after all that. Only the exchange happens here; status-report.ts reads the answer as it
// would have read its own.
import { systemClock } from "@chopin/agent-link/clock";
import { askIpcLine } from "../local/ipc-transport";

/** The daemon's answer line as JSON, or what stopped it (no daemon, a timeout, Ctrl-C...), as sendIpcLine gives them. */
export type DaemonAnswer = { ok: true; json: unknown } | { ok: false; error: unknown };

export interface DaemonAsk {
	/** Settles once the request is on its way, or once there is no answer to wait for. */
	readonly sent: Promise<void>;
	/**
	 * The answer, for whoever waits for it: only then do the timeout and Ctrl-C handling start (most often the answer
	 * is in by then, and neither is needed). Never rejects, as no one may wait for it for a while.
	 */
	answer(): Promise<DaemonAnswer>;
}

export function askDaemonStatus(socket: string, signal: AbortSignal): DaemonAsk {
	let onSent!: () => void;
	const written = new Promise<void>((resolve) => {
		onSent = resolve;
	});
	const ask = askIpcLine({ socket, clock: systemClock(), signal, onSent }, { type: "status" }, true);
	const answer = ask.answer.then(
		(json): DaemonAnswer => ({ ok: true, json }),
		(error: unknown): DaemonAnswer => ({ ok: false, error }),
	);
	return {
		sent: Promise.race([written, answer.then(() => undefined)]),
		answer: () => {
			ask.watch();
			return answer;
		},
	};
}
