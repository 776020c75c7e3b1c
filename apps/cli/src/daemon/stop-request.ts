// A file that asks the daemon to stop: for a service manager that can only kill it (Windows' Task Scheduler), and as
// a way in when the control socket cannot be reached. Looked for every second; taken (deleted) when found.
import type { Clock, Timer } from "@chopin/agent-link/clock";
import { removeFile } from "../local/files";

/** How often the daemon looks for the stop request. */
export const STOP_REQUEST_EVERY_MS = 1_000;

/** Calls `stop` once the file appears (deleting it first); returns what ends the watch. */
export function watchStopRequest(options: { clock: Clock; file: string; stop(): void }): () => void {
	let timer: Timer | undefined;
	let ended = false;
	const look = async () => {
		if (ended) return;
		if (await Bun.file(options.file).exists()) {
			removeFile(options.file);
			ended = true;
			options.stop();
			return;
		}
		timer = options.clock.setTimeout(() => void look(), STOP_REQUEST_EVERY_MS);
	};
	// A request left from before this daemon started is not for it.
	removeFile(options.file);
	timer = options.clock.setTimeout(() => void look(), STOP_REQUEST_EVERY_MS);
	return () => {
		ended = true;
		timer?.cancel();
	};
}
